//! `qpslab server threads` as text: one table per class (threads, CPU, affinity, nice), then
//! one row per thread, busiest first. Pure, tested against a golden file.

use crate::render::table;
use qpslab_probe::threads::{ServerThreads, Thread};

/// Both tables; `interval_s` says whether CPU is a percentage over an interval or seconds since
/// each thread started.
pub fn threads_text(t: &ServerThreads, interval_s: Option<f64>) -> String {
    let cpu = match interval_s {
        Some(s) => format!("cpu% ({s} s)"),
        None => "cpu s".to_string(),
    };
    let mut out = format!("server pid {} · {} thread(s)\n", t.pid, t.threads.len());
    if !t.classes_known {
        out.push_str(
            "performance_schema is OFF: threads are listed without classes (every thread is \
             named mariadbd); restart the server with performance_schema=ON to see them\n",
        );
    }
    let header = ["class", "threads", cpu.as_str(), "cpus", "nice"].map(String::from);
    let rows: Vec<Vec<String>> = t
        .classes()
        .iter()
        .map(|c| {
            let members: Vec<&Thread> = t
                .threads
                .iter()
                .filter(|th| c.tids.contains(&th.task.tid))
                .collect();
            vec![
                c.class.clone(),
                c.tids.len().to_string(),
                format!("{:.2}", c.cpu),
                common(&members, |th| cpus(&th.task.cpus)),
                common(&members, |th| th.task.nice.to_string()),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&table(&header, &rows));
    let header = ["tid", "class", "conn", cpu.as_str(), "cpus", "nice"].map(String::from);
    let mut sorted: Vec<&Thread> = t.threads.iter().collect();
    sorted.sort_by(|a, b| {
        b.task
            .cpu_s
            .total_cmp(&a.task.cpu_s)
            .then(a.task.tid.cmp(&b.task.tid))
    });
    let rows: Vec<Vec<String>> = sorted
        .iter()
        .map(|th| {
            vec![
                th.task.tid.to_string(),
                th.class.clone().unwrap_or_else(|| "-".into()),
                th.connection_id
                    .map_or_else(|| "-".into(), |c| c.to_string()),
                format!("{:.2}", th.task.cpu_s),
                cpus(&th.task.cpus),
                th.task.nice.to_string(),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&table(&header, &rows));
    out
}

/// The value all threads share, or `mixed`.
fn common(members: &[&Thread], f: impl Fn(&Thread) -> String) -> String {
    let mut values = members.iter().map(|t| f(t));
    let first = values.next().unwrap_or_default();
    if values.all(|v| v == first) {
        first
    } else {
        "mixed".into()
    }
}

/// A CPU list as ranges, as `/proc` writes it: `0-3,6`.
fn cpus(list: &[usize]) -> String {
    qpslab_core::cpus::render_ranges(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;
    use qpslab_probe::threads::Task;

    fn thread(
        tid: u32,
        class: Option<&str>,
        conn: Option<u64>,
        cpu_s: f64,
        cpus: Vec<usize>,
    ) -> Thread {
        Thread {
            task: Task {
                tid,
                comm: "mariadbd".into(),
                cpu_s,
                nice: 0,
                cpus,
            },
            class: class.map(String::from),
            kind: None,
            connection_id: conn,
        }
    }

    #[test]
    fn threads_golden() {
        let t = ServerThreads {
            pid: 4242,
            classes_known: true,
            threads: vec![
                thread(4242, Some("thread/sql/main"), None, 0.5, vec![0, 1]),
                thread(
                    4250,
                    Some("thread/innodb/page_cleaner_thread"),
                    None,
                    2.25,
                    vec![1],
                ),
                thread(
                    4260,
                    Some("thread/sql/one_connection"),
                    Some(7),
                    12.0,
                    vec![0, 1],
                ),
                thread(
                    4261,
                    Some("thread/sql/one_connection"),
                    Some(8),
                    10.0,
                    vec![0],
                ),
                thread(4270, None, None, 0.0, vec![0, 1]),
            ],
        };
        golden("server_threads.txt", &threads_text(&t, None));
        let off = ServerThreads {
            classes_known: false,
            threads: vec![thread(4242, None, None, 1.0, vec![0, 1, 2, 3, 6])],
            ..t
        };
        golden("server_threads_off.txt", &threads_text(&off, Some(2.0)));
    }

    #[test]
    fn cpu_lists_read_like_proc() {
        assert_eq!(cpus(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(cpus(&[1]), "1");
        assert_eq!(cpus(&[]), "");
    }
}
