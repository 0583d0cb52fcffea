//! `qpslab lab plan` on specs that ask for more than a machine holds: a user error (exit 2)
//! naming the limit, not a process that fills the memory (the fuzzing of specs found both).

mod common;

use common::{assert_user_error, Scratch};

#[test]
fn runaway_specs_are_user_errors() {
    let s = Scratch::new();
    let factors: String = (0..30)
        .map(|i| format!("[factors.f{i}]\na = {{}}\nb = {{}}\n"))
        .collect();
    for (name, text, needle) in [
        (
            "repeats.toml",
            "name = \"r\"\n[defaults]\nrepeats = 4294967295\n".to_string(),
            "4294967295 cells, more than 100000",
        ),
        (
            "factors.toml",
            format!("name = \"f\"\n{factors}"),
            "1073741824 cells, more than 100000",
        ),
        (
            "cpus.toml",
            "name = \"c\"\n[[variant]]\nname = \"a\"\ncpus = \"0-18446744073709551615\"\n"
                .to_string(),
            "CPU list",
        ),
    ] {
        let p = s.path().join(name);
        std::fs::write(&p, text).unwrap();
        assert_user_error(&s.run(&["lab", "plan", &p.display().to_string()]), needle);
    }
    assert!(!s.db().exists(), "a rejected spec writes nothing");
}
