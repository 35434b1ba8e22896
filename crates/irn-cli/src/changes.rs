//! What each `[[compare]]` variant changes, as short `key=value` pairs for the lines `irn run`,
//! `irn validate` and the report print per variant. Computed from the resolved scenarios, leaf
//! by leaf, so that a key shows whatever section it is in (a pause rule, the topology, a preset,
//! the ordering layer), not only the few a hand-written line knows about.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Every leaf of a resolved scenario (as `summary.json` holds it): its dotted key and its value
/// as a line shows it, strings bare. A `null` (a section or key left out) is no leaf.
pub fn leaves(v: &Value) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
        let shown = match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let key = match prefix {
                        "" => k.clone(),
                        _ => format!("{prefix}.{k}"),
                    };
                    walk(&key, v, out);
                }
                return;
            }
            Value::Null => return,
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.insert(prefix.to_string(), shown);
    }
    let mut out = BTreeMap::new();
    walk("", v, &mut out);
    out
}

/// The keys `variant` changes from `base`, as `key=value` in key order; `key=-` for one it
/// leaves out that the base has. A key the base lacks beside a selector the variant changes
/// (`load_balancing.samples` when `load_balancing.kind` becomes `drill`, `topology.paths` with
/// `topology.routing`) is the selector's default filling in, not a choice, and is left out
/// unless `chosen` (the keys the variant's `set` names) has it: the line stays the variant's
/// own words. So is `run.partitions = "auto"`, which a run records when the default partitions
/// it.
pub fn changed(base: &Value, variant: &Value, chosen: &[String]) -> Vec<String> {
    let (base, variant) = (leaves(base), leaves(variant));
    let keys: BTreeSet<&String> = base.keys().chain(variant.keys()).collect();
    let differs = |k: &str| base.get(k) != variant.get(k);
    let filled_in = |k: &str| {
        let parent = k.rsplit_once('.').map_or("", |(p, _)| p);
        let selector = |s: &str| {
            let key = if parent.is_empty() {
                s.to_string()
            } else {
                format!("{parent}.{s}")
            };
            key != k && differs(&key)
        };
        // `run.partitions = "auto"` is recorded in a run the default partitions, not chosen.
        let recorded = k == "run.partitions" && variant.get(k).is_some_and(|v| v == "auto");
        !base.contains_key(k)
            && !chosen.iter().any(|c| c == k)
            && (selector("kind") || selector("rule") || selector("routing") || recorded)
    };
    (keys.into_iter())
        .filter(|k| differs(k) && !filled_in(k))
        .map(|k| format!("{k}={}", variant.get(k).map_or("-", String::as_str)))
        .collect()
}

/// Each variant's values of the keys on which the variants differ, for when their base is not
/// known (a results folder holds only the variants' resolved scenarios).
pub fn differing(variants: &[Value]) -> Vec<Vec<String>> {
    let all: Vec<BTreeMap<String, String>> = variants.iter().map(leaves).collect();
    let keys: BTreeSet<&String> = all.iter().flat_map(BTreeMap::keys).collect();
    let differ: Vec<&String> = (keys.into_iter())
        .filter(|k| all.iter().any(|v| v.get(*k) != all[0].get(*k)))
        .collect();
    (all.iter())
        .map(|v| {
            (differ.iter())
                .map(|k| format!("{k}={}", v.get(*k).map_or("-", String::as_str)))
                .collect()
        })
        .collect()
}

/// The pairs as a line ends with them: `; sets a=1, b=2`, or nothing when there are none.
pub fn suffix(pairs: &[String]) -> String {
    match pairs.is_empty() {
        true => String::new(),
        false => format!("; sets {}", pairs.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_change_anywhere_shows_as_a_dotted_key() {
        let base = json!({"name": "s", "switch": {"pfc": false, "pause": {"rule": "xoff"}},
                          "ordering": {"kind": null}, "failures": {"at": "1ms"}});
        let variant = json!({"name": "s", "switch": {"pfc": true, "pause": {"rule": "dynamic"}},
                             "ordering": {"kind": "reorder"}, "topology": {"k": 4}});
        assert_eq!(
            changed(&base, &variant, &[]),
            [
                "failures.at=-",
                "ordering.kind=reorder",
                "switch.pause.rule=dynamic",
                "switch.pfc=true",
                "topology.k=4"
            ]
        );
        assert!(changed(&base, &base, &[]).is_empty());
        // The default's partitions, recorded in a run, are not the variant's choice.
        let parted = json!({"name": "s", "switch": {"pfc": false, "pause": {"rule": "xoff"}},
                            "ordering": {"kind": null}, "failures": {"at": "1ms"},
                            "run": {"partitions": "auto"}});
        assert!(changed(&base, &parted, &[]).is_empty());
        let chosen = ["run.partitions".to_string()];
        assert_eq!(changed(&base, &parted, &chosen), ["run.partitions=auto"]);
        let drill = json!({"name": "s", "switch": {"pfc": false, "pause": {"rule": "xoff"}},
                           "ordering": {"kind": "eunomia", "cap": 256},
                           "load_balancing": {"kind": "drill", "samples": 2},
                           "failures": {"at": "1ms"}});
        let base = json!({"name": "s", "switch": {"pfc": false, "pause": {"rule": "xoff"}},
                          "ordering": {"kind": null}, "load_balancing": {"kind": "ecmp"},
                          "failures": {"at": "1ms"}});
        assert_eq!(
            changed(&base, &drill, &[]),
            ["load_balancing.kind=drill", "ordering.kind=eunomia"]
        );
        // A key the variant sets itself shows, even where its selector's default would fill in.
        let chosen = ["ordering.kind".to_string(), "ordering.cap".to_string()];
        assert_eq!(
            changed(&base, &drill, &chosen),
            [
                "load_balancing.kind=drill",
                "ordering.cap=256",
                "ordering.kind=eunomia"
            ]
        );
        assert_eq!(suffix(&changed(&base, &base, &[])), "");
        assert_eq!(suffix(&["a=1".into(), "b=x".into()]), "; sets a=1, b=x");
    }

    #[test]
    fn without_a_base_each_variant_shows_the_keys_the_variants_differ_in() {
        let a = json!({"seed": 1, "transport": {"kind": "irn"}});
        let b = json!({"seed": 1, "transport": {"kind": "roce"}, "switch": {"pfc": true}});
        assert_eq!(
            differing(&[a, b]),
            [
                vec!["switch.pfc=-".to_string(), "transport.kind=irn".into()],
                vec!["switch.pfc=true".to_string(), "transport.kind=roce".into()],
            ]
        );
    }
}
