use super::*;
use crate::rand::Rng;
use crate::workload::{Arg, EventBuf};
use qpslab_core::workload::RandOptions;

fn src(name: &str, weight: u32, text: &str) -> ScriptSource {
    ScriptSource {
        name: name.into(),
        path: format!("/x/{name}"),
        weight,
        text: text.into(),
    }
}

fn err(text: &str) -> String {
    ScriptSet::parse(&[src("w.sql", 1, text)])
        .unwrap_err()
        .to_string()
}

const TWO: &str = "\\set id random(1, 100)\n\\set d :id * 2 - 1\nSELECT c FROM t\n  WHERE id = :id;\nUPDATE t SET k = k + :d WHERE id = :id;\n";

#[test]
fn statements_are_named_file_line_with_classes_and_params() {
    let set = ScriptSet::parse(&[src("w.sql", 1, TWO)]).unwrap();
    let s = set.statements();
    assert_eq!(s.len(), 2);
    assert_eq!((&*s[0].kind, s[0].class), ("w.sql:3", StmtClass::Read));
    assert_eq!(s[0].sql, "SELECT c FROM t\n  WHERE id = ?");
    assert_eq!((&*s[1].kind, s[1].class), ("w.sql:5", StmtClass::Write));
    assert_eq!(s[1].params, vec![ParamKind::Int; 2]);
    assert_eq!(class_of("  (SELECT 1)"), StmtClass::Read);
    assert_eq!(
        class_of("/*+ hint */ replace INTO t VALUES (1)"),
        StmtClass::Write
    );
    assert_eq!(class_of("BEGIN"), StmtClass::Other);
}

#[test]
fn an_event_binds_the_variables_set_before_each_statement() {
    let set = ScriptSet::parse(&[src("w.sql", 1, TWO)]).unwrap();
    let mut gen = ScriptGen::new(&set);
    let (mut rng, rand) = (Rng::new(9), RandOptions::default());
    let mut ev = EventBuf::default();
    for _ in 0..100 {
        ev.clear();
        gen.fill(&set, &mut rng, &rand, &mut ev);
        assert_eq!(ev.calls.len(), 2);
        let id = match ev.call_args(&ev.calls[0]) {
            [Arg::Int(id)] => *id,
            a => panic!("{a:?}"),
        };
        assert!((1..=100).contains(&id));
        assert_eq!(
            ev.call_args(&ev.calls[1]),
            [Arg::Int(id * 2 - 1), Arg::Int(id)]
        );
    }
}

#[test]
fn weights_pick_scripts_in_proportion() {
    let a = src("a.sql", 3, "SELECT 1;");
    let b = src("b.sql", 1, "SELECT 2;");
    let z = src("z.sql", 0, "SELECT 3;");
    let set = ScriptSet::parse(&[a, b, z]).unwrap();
    let mut gen = ScriptGen::new(&set);
    let (mut rng, rand) = (Rng::new(5), RandOptions::default());
    let mut n = [0u32; 3];
    let mut ev = EventBuf::default();
    for _ in 0..40_000 {
        ev.clear();
        gen.fill(&set, &mut rng, &rand, &mut ev);
        n[ev.calls[0].stmt as usize] += 1;
    }
    assert_eq!(n[2], 0, "a weight of 0 never runs");
    let ratio = f64::from(n[0]) / f64::from(n[1]);
    assert!((2.8..3.2).contains(&ratio), "{n:?}");
}

#[test]
fn sleeps_become_sleep_calls_in_microseconds() {
    let text = "\\set t 3\n\\sleep 10ms\nSELECT 1;\n\\sleep :t us\n\\sleep 2\n";
    let set = ScriptSet::parse(&[src("s.sql", 1, text)]).unwrap();
    let mut gen = ScriptGen::new(&set);
    let mut ev = EventBuf::default();
    gen.fill(&set, &mut Rng::new(1), &RandOptions::default(), &mut ev);
    let got: Vec<(u32, Vec<Arg>)> = ev
        .calls
        .iter()
        .map(|c| (c.stmt, ev.call_args(c).to_vec()))
        .collect();
    let sleep = |us| (SLEEP_CALL, vec![Arg::Int(us)]);
    assert_eq!(
        got,
        vec![sleep(10_000), (0, vec![]), sleep(3), sleep(2_000_000)]
    );
}

#[test]
fn a_failing_expression_empties_the_event_and_names_its_line() {
    let set =
        ScriptSet::parse(&[src("d.sql", 1, "\\set z 0\nSELECT 1;\n\\set q 10 / :z\n")]).unwrap();
    let mut gen = ScriptGen::new(&set);
    let mut ev = EventBuf::default();
    gen.fill(&set, &mut Rng::new(1), &RandOptions::default(), &mut ev);
    assert!(ev.calls.is_empty());
    assert_eq!(gen.failure(), Some("d.sql:3: division by zero"));
}

#[test]
fn parse_errors_name_file_and_line() {
    assert_eq!(
        err("SELECT 1;\nSELECT :nope;"),
        "w.sql:2: unknown variable ':nope' (no \\set before this line)"
    );
    assert_eq!(
        err("\\set a :a + 1\nSELECT 1;"),
        "w.sql:1: unknown variable ':a' (no \\set before this line)"
    );
    assert_eq!(
        err("SELECT 1;\n\\gset x"),
        "w.sql:2: unknown meta-command '\\gset' (known: \\set, \\sleep)"
    );
    assert_eq!(
        err("\\set a random(1,\nSELECT 1;"),
        "w.sql:1: the expression ends too early"
    );
    assert_eq!(
        err("SELECT 1;\n\\sleep 5 min"),
        "w.sql:2: unknown \\sleep unit 'min' (us, ms or s)"
    );
    assert_eq!(
        err("SELECT 1;\n\\sleep :t"),
        "w.sql:2: unknown variable ':t' (no \\set before this line)"
    );
    assert_eq!(
        err("\\set 1a+ 2\nSELECT 1;"),
        "w.sql:1: \\set needs a variable name and an expression (got '1a+ 2')"
    );
    assert_eq!(
        err("\\set x random_zipfian(1, 9, 0.5)\nSELECT 1;"),
        "w.sql:1: random_zipfian()'s parameter must be between 1.001 and 1000 (got 0.5)"
    );
    assert_eq!(
        err("-- nothing\n\\set a 1\n"),
        "w.sql: the script has no SQL statement"
    );
    assert_eq!(err("SELECT 'x;\n"), "w.sql:1: unterminated ' quote");
    let zero = ScriptSet::parse(&[src("a.sql", 0, "SELECT 1;")]).unwrap_err();
    assert!(zero.to_string().contains("total weight"), "{zero}");
}

#[test]
fn a_variable_set_in_one_script_is_unknown_in_another() {
    let a = src("a.sql", 1, "\\set id 1\nSELECT :id;");
    let b = src("b.sql", 1, "SELECT :id;");
    let e = ScriptSet::parse(&[a, b]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "b.sql:1: unknown variable ':id' (no \\set before this line)"
    );
}

#[test]
fn text_rendering_leaves_a_quoted_question_mark_alone() {
    let mut o = qpslab_core::WorkloadOptions::new(qpslab_core::WorkloadKind::OltpPointSelect);
    o.scripts = vec![src("q.sql", 1, "\\set a 5\nSELECT '?', :a /* ? */;\n")];
    let w = crate::workload::Workload::new(&o).unwrap();
    let mut gen = w.session(0, 1);
    let mut ev = EventBuf::default();
    gen.next_event(&mut ev);
    let mut sql = Vec::new();
    w.render_text(&ev, &ev.calls[0], &mut sql);
    assert_eq!(String::from_utf8(sql).unwrap(), "SELECT '?', 5 /* ? */");
}

#[test]
fn deep_nesting_is_an_error_naming_the_line_not_a_stack_overflow() {
    let deep = format!(
        "SELECT 1;\n\\set a {}1{}\nSELECT :a;\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert_eq!(err(&deep), "w.sql:2: nesting deeper than 64");
    let within = format!("{}1{}", "(".repeat(64), ")".repeat(64));
    ScriptSet::parse(&[src("w.sql", 1, &format!("\\set a {within}\nSELECT :a;\n"))]).unwrap();
    // A long chain of operators or minus signs is as deep a tree as it is long.
    let chain = format!("\\set a 1{}\nSELECT :a;\n", "+1".repeat(100_000));
    assert_eq!(
        err(&chain),
        "w.sql:1: an expression longer than 1024 tokens"
    );
    let minus = format!("\\set a {}1\nSELECT :a;\n", "-".repeat(100_000));
    assert_eq!(
        err(&minus),
        "w.sql:1: an expression longer than 1024 tokens"
    );
    let fine = format!("\\set a {}1\nSELECT :a;\n", "- ".repeat(1000));
    ScriptSet::parse(&[src("w.sql", 1, &fine)]).unwrap();
}

#[test]
fn errors_quote_at_most_a_short_excerpt_of_a_long_line() {
    let long = "x".repeat(1 << 20);
    for text in [
        format!("\\set a {long}\nSELECT 1;\n"),
        format!("\\set {long}! 1\nSELECT 1;\n"),
        format!("\\{long}\nSELECT 1;\n"),
        format!("\\sleep {long}\nSELECT 1;\n"),
        format!("\\sleep 1 {long}\nSELECT 1;\n"),
        format!("\\set a 1.{}\nSELECT 1;\n", "1.".repeat(1000)),
        format!("SELECT :{long};\n"),
    ] {
        let e = err(&text);
        let head: String = e.chars().take(80).collect();
        assert!(
            e.len() < 300 && e.contains('…'),
            "{} bytes: {head}",
            e.len()
        );
    }
    let init = src("i.sql", 1, &format!("SELECT :{long};\n"));
    assert!(init_statements(&init).unwrap_err().to_string().len() < 300);
}

#[test]
fn a_script_over_the_size_limit_is_refused() {
    let text = "-".repeat(SCRIPT_LIMIT as usize + 1);
    assert_eq!(
        err(&text),
        "w.sql: is larger than 64 MiB, the limit for a script"
    );
}
