//! TPC-C's rates of a phase, each defined once for every surface (`run`'s summary, `show`,
//! reports): NewOrder/min as the client counted it, the server's NOPM, tpmC (spec mode,
//! unscaled, only), the efficiency, and each type's 90th percentile against the spec's limit.

use crate::latency::quantile_ms;
use crate::result::PhaseResult;
use crate::tpcc::{ResponseLimit, TpccMode, LIMIT_P90_S, TPMC_PER_WAREHOUSE, TYPES};

impl PhaseResult {
    /// Events that ended in statement kind `kind` (`new_order.commit`).
    pub fn kind_count(&self, kind: &str) -> u64 {
        self.statements
            .iter()
            .find(|s| s.kind == kind)
            .map_or(0, |s| s.latency.count)
    }

    fn per_min(&self, n: u64) -> f64 {
        if self.duration_s > 0.0 {
            n as f64 * 60.0 / self.duration_s
        } else {
            0.0
        }
    }

    /// Committed New-Orders per minute as the client counted them (its `new_order.commit`s),
    /// over the measured phase.
    pub fn new_orders_per_min(&self) -> f64 {
        self.per_min(self.kind_count("new_order.commit"))
    }

    /// TPC-C transactions per minute over the measured phase (every type, committed or
    /// rolled back).
    pub fn transactions_per_min(&self) -> f64 {
        self.per_min(self.events)
    }

    /// New-Orders per minute the server committed over the measured phase (the change of
    /// `sum(d_next_o_id)`: HammerDB's NOPM); none when the phase was not TPC-C's.
    pub fn server_nopm(&self) -> Option<f64> {
        Some(self.per_min(self.tpcc.as_ref()?.server_new_orders))
    }

    /// tpmC: the client's New-Orders per minute, only for a spec-mode phase whose keying and
    /// think times were not scaled (none otherwise: stress mode never gives a tpmC).
    pub fn tpmc(&self) -> Option<f64> {
        let t = self.tpcc.as_ref()?;
        (t.mode == TpccMode::Spec && !t.scaled()).then(|| self.new_orders_per_min())
    }

    /// Spec mode's efficiency: New-Orders per minute over 12.86 times the warehouses, in
    /// percent (none outside spec mode).
    pub fn tpcc_efficiency_pct(&self) -> Option<f64> {
        let t = self.tpcc.as_ref().filter(|t| t.mode == TpccMode::Spec)?;
        let ceiling = TPMC_PER_WAREHOUSE * f64::from(t.warehouses.max(1));
        Some(self.new_orders_per_min() / ceiling * 100.0)
    }

    /// Each type's 90th-percentile response time against the spec's limit, from the phase's
    /// histogram of that type (or its summary when the histograms were not kept).
    pub fn response_limits(&self) -> Vec<ResponseLimit> {
        TYPES
            .iter()
            .zip(LIMIT_P90_S)
            .map(|(kind, limit_s)| ResponseLimit {
                kind,
                p90_ms: self.kind_percentile_ms(kind, 90.0),
                limit_s,
            })
            .collect()
    }

    /// Percentile `p` of statement kind (or event type) `kind`, ms: from its stored histogram,
    /// else its summary when it holds `p`.
    pub fn kind_percentile_ms(&self, kind: &str, p: f64) -> Option<f64> {
        let h = self
            .histograms
            .iter()
            .find(|h| h.name == kind)
            .and_then(|b| b.histogram())
            .filter(|h| !h.is_empty());
        if let Some(h) = h {
            return Some(quantile_ms(&h, p));
        }
        let s = self.statements.iter().find(|s| s.kind == kind)?;
        s.latency.percentile(p)
    }
}

#[cfg(test)]
mod tests {
    use crate::result::{LatencySummary, Percentile, PhaseResult, StatementLatency};
    use crate::tpcc::{TpccFigures, TpccMode};

    fn kind(name: &str, count: u64, p90: f64) -> StatementLatency {
        StatementLatency {
            kind: name.into(),
            latency: LatencySummary {
                count,
                percentiles: vec![Percentile { p: 90.0, ms: p90 }],
                ..LatencySummary::default()
            },
        }
    }

    #[test]
    fn rates_tpmc_only_unscaled_spec_and_limits() {
        let mut p = PhaseResult {
            duration_s: 30.0,
            events: 200,
            statements: vec![
                kind("new_order.commit", 90, 0.0),
                kind("new_order", 91, 4_000.0),
                kind("stock_level", 3, 25_000.0),
            ],
            ..PhaseResult::default()
        };
        assert_eq!(p.new_orders_per_min(), 180.0);
        assert_eq!(p.transactions_per_min(), 400.0);
        assert_eq!(p.server_nopm(), None);
        assert_eq!(p.tpmc(), None);
        let mut t = TpccFigures {
            mode: TpccMode::Stress,
            think_scale: 1.0,
            warehouses: 2,
            server_new_orders: 89,
            ..TpccFigures::default()
        };
        p.tpcc = Some(t.clone());
        assert_eq!(p.server_nopm(), Some(178.0));
        assert_eq!(p.tpmc(), None, "stress mode never gives tpmC");
        assert_eq!(p.tpcc_efficiency_pct(), None);
        t.mode = TpccMode::Spec;
        p.tpcc = Some(t.clone());
        assert_eq!(p.tpmc(), Some(180.0));
        let eff = p.tpcc_efficiency_pct().unwrap();
        assert!((eff - 180.0 / 25.72 * 100.0).abs() < 1e-9, "{eff}");
        t.think_scale = 0.01;
        p.tpcc = Some(t);
        assert_eq!(p.tpmc(), None, "a scaled run gives no tpmC");
        let limits = p.response_limits();
        assert_eq!(limits[0].passed(), Some(true));
        assert_eq!(limits[1].passed(), None, "no payment measured");
        assert_eq!(limits[3].passed(), None, "delivery is not judged");
        assert_eq!(limits[4].passed(), Some(false));
    }
}
