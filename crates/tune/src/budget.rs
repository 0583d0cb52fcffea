//! How a session's budget is split, pure: the search, the confirmation and the rechecks each
//! get a share, decided before the search starts, and each later part also gets what the one
//! before it left.
//!
//! - The confirmation's share is [`CONFIRM_SHARE`] of the budget, and never less than its
//!   minimum rounds cost (`--repeats` pairs): the decision is worth as much time as a good
//!   part of the search, and a confirmation that ends undecided for want of rounds leaves the
//!   search's find unused.
//! - The rechecks' share is one recheck (a change removed, three pairs of short trials) when several knobs are searched and it is at most [`RECHECK_SHARE`] of the
//!   budget; none otherwise (a confirmed set of one change needs no recheck).
//! - The search gets the rest. It ends by `search_s`; the confirmation may then run until
//!   `budget − recheck_s` (its share and what a converged search left unspent; the whole
//!   budget when the candidate is one change, which no recheck follows); the rechecks until
//!   the budget's end (their share and what a confirmation that decided early left).

/// Share of the budget the confirmation gets (at least its minimum rounds).
pub const CONFIRM_SHARE: f64 = 0.4;

/// The most of the budget the rechecks' reserve may take.
pub const RECHECK_SHARE: f64 = 0.2;

/// A session's budget split, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shares {
    /// The whole budget.
    pub budget_s: f64,
    /// The search's: it ends by then.
    pub search_s: f64,
    /// The confirmation's share.
    pub confirm_s: f64,
    /// Reserved for rechecking a confirmed set of several changes.
    pub recheck_s: f64,
}

impl Shares {
    /// Splits `budget_s`: `min_confirm_s` is what the confirmation's minimum rounds cost,
    /// `one_recheck_s` what one recheck costs, `several_knobs` whether a confirmed set could
    /// hold more than one change.
    pub fn split(
        budget_s: f64,
        min_confirm_s: f64,
        one_recheck_s: f64,
        several_knobs: bool,
    ) -> Shares {
        let confirm_s = min_confirm_s.max(CONFIRM_SHARE * budget_s).min(budget_s);
        let recheck_s = match several_knobs && one_recheck_s <= RECHECK_SHARE * budget_s {
            true => one_recheck_s.min(budget_s - confirm_s).max(0.0),
            false => 0.0,
        };
        Shares {
            budget_s,
            search_s: budget_s - confirm_s - recheck_s,
            confirm_s,
            recheck_s,
        }
    }

    /// Seconds from the session's start by which the confirmation of a candidate of
    /// `changes` changes ends: before the rechecks' share when rechecks may follow.
    pub fn confirm_until(&self, changes: usize) -> f64 {
        match changes > 1 {
            true => self.budget_s - self.recheck_s,
            false => self.budget_s,
        }
    }

    /// `search 96 s, confirmation 144 s, rechecks 120 s of a 360 s budget`.
    pub fn words(&self) -> String {
        format!(
            "search {:.0} s, confirmation {:.0} s, rechecks {:.0} s of a {:.0} s budget",
            self.search_s, self.confirm_s, self.recheck_s, self.budget_s
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_has_its_share_and_they_make_the_budget() {
        // Six minutes, a minimum confirmation of 66 s, rechecks of 72 s, several knobs.
        let s = Shares::split(360.0, 66.0, 72.0, true);
        assert_eq!((s.confirm_s, s.recheck_s), (144.0, 72.0));
        assert_eq!(s.search_s + s.confirm_s + s.recheck_s, 360.0);
        assert_eq!(s.confirm_until(2), 288.0);
        assert_eq!(s.confirm_until(1), 360.0);
        assert_eq!(
            s.words(),
            "search 144 s, confirmation 144 s, rechecks 72 s of a 360 s budget"
        );
        // One knob: nothing reserved for rechecks.
        let one = Shares::split(360.0, 66.0, 72.0, false);
        assert_eq!((one.search_s, one.recheck_s), (216.0, 0.0));
    }

    #[test]
    fn a_small_budget_keeps_the_minimum_confirmation_and_reserves_no_recheck() {
        // 36 s with a minimum confirmation of 18 s: half of it; a recheck of 24 s is more
        // than a fifth of the budget, so none is reserved.
        let s = Shares::split(36.0, 18.0, 24.0, true);
        assert_eq!((s.search_s, s.confirm_s, s.recheck_s), (18.0, 18.0, 0.0));
        // The minimum confirmation above the budget takes it all.
        let s = Shares::split(10.0, 18.0, 1.0, true);
        assert_eq!((s.search_s, s.confirm_s, s.recheck_s), (0.0, 10.0, 0.0));
    }
}
