//! `run` options whose flags are declared with `run`'s own arguments rather than made from this
//! table, here so that the table says what a study does with them: the client's
//! `max_allowed_packet` (a connection flag, also read from the option files) is a study key;
//! `histogram` (how each phase's end is printed) is not.

use super::def::{choices, def, on_off, OptionDef, Scope, Study, ON_OFF};
use super::value::{choice, text};

/// The options, in the order the table lists them.
pub(crate) static CLIENT: &[OptionDef] = &[
    def(
        "max_allowed_packet",
        Scope::Study,
        "SIZE",
        "The largest packet the client accepts from the server (4K to 1G, e.g. 64M), as \
         `run --max-allowed-packet`",
        "32M",
        |b, v| {
            let v = text(v)?;
            let size = qpslab_core::dsn::max_allowed_packet(&v).ok_or_else(|| {
                format!("max_allowed_packet '{v}': give a size from 4K to 1G (e.g. 64M)")
            })?;
            b.max_allowed_packet = Some(size);
            Ok(())
        },
        |b| {
            b.max_allowed_packet
                .map_or_else(|| "1G".into(), |n| n.to_string())
        },
    ),
    OptionDef {
        sweepable: false,
        study: Study::Exempt(
            "display only: `run --histogram` prints each phase's latency histogram at its end; \
             a study's report draws its cells' histograms from the store",
        ),
        ..choices(
            def(
                "histogram",
                Scope::Study,
                "on|off",
                "Print each phase's latency histogram at its end, as sysbench's --histogram",
                "on",
                |b, v| {
                    b.histogram = choice(v, ON_OFF)? == "on";
                    Ok(())
                },
                |b| on_off(b.histogram),
            ),
            ON_OFF,
        )
    },
];

#[cfg(test)]
mod tests {
    use crate::options::builder::Origin;
    use crate::options::resolve::resolve;
    use crate::options::RunOptions;
    use serde_json::json;

    #[test]
    fn max_allowed_packet_is_a_size_within_the_clients_bounds() {
        let v = json!("32M");
        let r = resolve([("max_allowed_packet", &v)], Origin::Spec).unwrap();
        assert_eq!(r.max_allowed_packet, Some(32 << 20));
        let r = resolve([] as [(&str, &serde_json::Value); 0], Origin::Spec).unwrap();
        assert_eq!(r.max_allowed_packet, None);
        for bad in ["1K", "2G", "lots"] {
            let v = json!(bad);
            let e = resolve([("max_allowed_packet", &v)], Origin::Spec)
                .unwrap_err()
                .0;
            assert!(e.contains("give a size from 4K to 1G"), "{e}");
        }
    }

    #[test]
    fn histogram_is_not_a_study_key() {
        let e = RunOptions::default()
            .set("histogram", json!("on"))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("histogram: not a study key: display only"),
            "{e}"
        );
    }
}
