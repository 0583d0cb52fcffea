//! Whose fault an error is. Every library error says it once, by implementing [`Blame`]; the
//! CLI maps the answer to its exit code in one place (2: the user's, 1: the machine's, the
//! server's or ours).

/// Whose fault a failure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// What the user asked for cannot be done as asked: a bad value, an unknown name, a wrong
    /// password, a server that is not where the user pointed.
    User,
    /// Everything else: the environment, the server, qpslab itself.
    Runtime,
}

/// An error that says whose fault it is.
pub trait Blame: std::error::Error + Send + Sync + 'static {
    /// Whose fault this error is. An error that wraps another usually asks the inner one.
    fn fault(&self) -> Fault;

    /// Shorthand for `fault() == Fault::User`.
    fn is_user_error(&self) -> bool {
        self.fault() == Fault::User
    }
}

/// `User` when `user` holds, else `Runtime`: for `fault()` bodies that test one condition.
pub fn user_if(user: bool) -> Fault {
    if user {
        Fault::User
    } else {
        Fault::Runtime
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("bad value")]
    struct Bad;
    impl Blame for Bad {
        fn fault(&self) -> Fault {
            Fault::User
        }
    }

    #[test]
    fn the_shorthand_follows_the_fault() {
        assert!(Bad.is_user_error());
        assert_eq!(user_if(false), Fault::Runtime);
        assert_eq!(user_if(true), Fault::User);
    }
}
