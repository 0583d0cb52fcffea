//! `qpslab merge`: the shards of one run, stored apart, made one run (built next).
