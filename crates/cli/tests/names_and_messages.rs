//! Issue 25, item 10: a sandbox name no command could name is refused, and a failed load says
//! what failed instead of "checking the dataset".

mod common;
use common::*;

#[test]
fn a_sandbox_name_starting_with_a_dash_is_refused() {
    let s = Scratch::new();
    for name in ["-x", "--rm"] {
        let o = s.run(&["server", "start", "--", name]);
        assert_user_error(&o, "starts with '-'");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    let o = s.run(&["server", "list"]);
    assert!(stdout(&o).contains("no sandboxes"), "{}", stdout(&o));
}
