//! Scenario files: TOML in, validated [`SimConfig`]s out.
//!
//! A scenario describes one network and workload, and optionally a list of `[[compare]]`
//! variants that each override a few keys (e.g. IRN without PFC against RoCE with PFC). Keys
//! can also be overridden from the command line (`--set transport.kind=roce`). Every key has a
//! default from the IRN paper's default case, so an empty file is a valid scenario.
//!
//! Checking happens in two passes: serde with `deny_unknown_fields` catches misspelled keys and
//! wrong types (with the line in the user's file), then validation turns strings like `"40Gbps"`
//! into typed values and checks ranges, naming the file, key, value and what is allowed.
//!
//! Each section has its own module with its struct as written, its kind's defaults and its
//! checks; this one merges the variants and overrides, then normalizes and validates the
//! sections in order.

use std::path::{Path, PathBuf};

use irn_core::ordering::OrderingMode;
use irn_core::transport::RtoPolicy;
use serde::{Deserialize, Serialize};

use crate::config::{ControlBalancing, InitialPsn, Ordering, SimConfig, SwitchConfig};
use crate::partition::{PartitionRule, Partitioning};
use crate::workload::VerbMix;

mod credits;
mod error;
mod experiment;
mod failures;
mod inputs;
mod load_balancing;
mod monitor;
mod ordering;
mod overrides;
mod pause;
mod run;
mod switch;
mod topology;
mod transport;
mod workload;

pub use error::ScenarioError;
pub use experiment::{
    Chart, CheckSection, Expect, ExperimentSection, Metric, PaperValue, PointSection, Side, SideAt,
    VariantLine,
};
pub use failures::{FailuresSection, LinkFailureSection};
pub use inputs::InputFile;
pub use load_balancing::{BalancerKind, Control, LoadBalancingSection};
pub use monitor::{node_tiers, MonitorSection, PortSelection};
pub use ordering::{Cap, OrderingKind, OrderingSection};
pub use pause::{Level, PauseControlSection, PausesSection, RuleKind, Span, LONGEST_PAUSE_BYTES};
pub use run::{RunSection, MAX_DRAIN_LIMIT};
pub use switch::{SwitchModelKind, SwitchSection};
pub use topology::{LossyLinkSection, Routing, TopologyKind, TopologySection, WanSection};
pub use transport::{CcKind, TransportKind, TransportSection};
pub use workload::{SizesSection, VerbsMixSection, WorkloadKind, WorkloadSection};

use error::{
    about, auto_or_at_least, check_keys, duration_in, invalid, link_rate, min_frame_floor,
    parse_key, rate_in, real, require, shown, SET,
};
use overrides::{parse_override, set_dotted};

/// A scenario as written, every key defaulted. Serialized back into `summary.json` as the
/// resolved scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScenarioFile {
    pub name: String,
    /// Seeds every random stream of the run.
    pub seed: u64,
    pub topology: TopologySection,
    pub switch: SwitchSection,
    pub load_balancing: LoadBalancingSection,
    pub ordering: OrderingSection,
    pub transport: TransportSection,
    pub workload: WorkloadSection,
    pub run: RunSection,
    /// `[monitor]`: time series (see [`MonitorSection`]); absent, none, and left out of the
    /// resolved scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitor: Option<MonitorSection>,
    /// `[[pause_control]]`: switch inputs with a pause rule of their own (see
    /// [`PauseControlSection`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pause_control: Vec<PauseControlSection>,
    /// `[pauses]`: hosts that pause their switch at random (see [`PausesSection`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pauses: Option<PausesSection>,
    /// `[failures]`: links that fail and come back (see [`FailuresSection`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailuresSection>,
    /// Variants to compare; each overrides keys of the scenario above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<VariantSection>,
    /// `[experiment]`: how `irn reproduce` and `irn check` run it (see [`ExperimentSection`]); not
    /// part of a run, so never serialized into one.
    #[serde(skip_serializing)]
    pub experiment: Option<ExperimentSection>,
    /// `[[check]]`: what the experiment should show.
    #[serde(skip_serializing)]
    pub check: Vec<CheckSection>,
}

impl Default for ScenarioFile {
    fn default() -> Self {
        ScenarioFile {
            name: "scenario".into(),
            seed: 1,
            topology: TopologySection::default(),
            switch: SwitchSection::default(),
            load_balancing: LoadBalancingSection::default(),
            ordering: OrderingSection::default(),
            transport: TransportSection::default(),
            workload: WorkloadSection::default(),
            run: RunSection::default(),
            monitor: None,
            pause_control: Vec::new(),
            pauses: None,
            failures: None,
            compare: Vec::new(),
            experiment: None,
            check: Vec::new(),
        }
    }
}

/// One `[[compare]]` entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSection {
    pub name: String,
    /// Dotted keys and their values, e.g. `{ "switch.pfc" = true }`.
    #[serde(default)]
    pub set: toml::Table,
    /// In a checked experiment, the grid points (`[[experiment.point]]` names) this variant
    /// runs at; every point when absent. A costly variant one check needs at one point need
    /// not run at every other. `irn run` ignores it: it has no points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<String>>,
}

/// A loaded, validated run: one per `[[compare]]` variant (or one for a plain scenario).
#[derive(Debug)]
pub struct Run {
    /// The variant's name, or the scenario's when there are no variants.
    pub name: String,
    /// The scenario with every default filled in and every override applied.
    pub resolved: ScenarioFile,
    pub config: SimConfig,
    /// What is allowed but likely not meant (a long link's buffer that cannot hold a round
    /// trip), for the command to print.
    pub warnings: Vec<String>,
    /// The dotted keys the variant's `set` names (`ordering.cap`, a table's keys one by one):
    /// what it chose, as against what its choices bring by default.
    pub set_keys: Vec<String>,
    /// The experiment's grid points this variant runs at (`[[compare]] points`); `None`: all.
    pub points: Option<Vec<String>>,
    /// The data files it reads, with their checksums: with `resolved`, what makes a finished
    /// run the same run.
    pub inputs: Vec<InputFile>,
}

/// The scenario's name and its runs, with its experiment and checks if it has any.
#[derive(Debug)]
pub struct Scenario {
    pub name: String,
    pub runs: Vec<Run>,
    /// Whether the runs are the file's `[[compare]]` variants (even a single one) rather than
    /// the scenario itself, so that a command lays out their results by variant name.
    pub compare: bool,
    /// With `[[compare]]` variants: the scenario they override, resolved (the file without its
    /// variants, with the command line's overrides), for saying what each variant changes;
    /// `None` without variants, or when it does not resolve alone.
    pub base: Option<ScenarioFile>,
    pub experiment: Option<ExperimentSection>,
    pub checks: Vec<CheckSection>,
}

/// Loads a scenario file, applying `overrides` (`key=value`) to every run, after (and so
/// over) each variant's own settings. A file without `name` is named after itself (`my_test.toml`
/// is `my_test`), so that two such files write two results folders, not one `scenario`.
pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    load_variants(path, overrides, None)
}

/// [`load`], running only the `[[compare]]` variants named in `only` (a sweep's `variants`),
/// in the file's order: an override then need not suit the variants left out (a grid over
/// `topology.wan.buffer` beside a variant that sets its own).
pub fn load_variants(
    path: &Path,
    overrides: &[String],
    only: Option<&[String]>,
) -> Result<Scenario, ScenarioError> {
    let text = crate::input::read_text(path, crate::input::SCENARIO).map_err(|error| {
        ScenarioError::Read {
            file: path.display().to_string(),
            error,
        }
    })?;
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    // First, so that a `--set name=…` given as well wins.
    let named: Vec<String> = (file_name_default(path, &text).into_iter())
        .chain(overrides.iter().cloned())
        .collect();
    parse_variants(&text, &path.display().to_string(), &base_dir, &named, only)
}

/// `name=<file stem>` for a scenario file whose text sets no `name`, an override to give
/// [`parse`] first; `None` when it sets one (or is not TOML: `parse` says what is wrong with
/// it).
pub fn file_name_default(path: &Path, text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let stem = path.file_stem()?.to_string_lossy();
    (!table.contains_key("name")).then(|| format!("name={}", toml::Value::from(stem.as_ref())))
}

/// Parses scenario text. `file` names it in errors; relative data paths resolve against `base_dir`.
pub fn parse(
    text: &str,
    file: &str,
    base_dir: &Path,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    parse_variants(text, file, base_dir, overrides, None)
}

/// [`parse`], running only the variants `only` names ([`load_variants`]).
fn parse_variants(
    text: &str,
    file: &str,
    base_dir: &Path,
    overrides: &[String],
    only: Option<&[String]>,
) -> Result<Scenario, ScenarioError> {
    let syntax = |message: String| ScenarioError::Syntax {
        file: file.to_string(),
        message,
    };
    // First pass on the text as written, so misspelled keys are reported at their line.
    let mut written: ScenarioFile = serde_path_to_error::deserialize(toml::Deserializer::new(text))
        .map_err(|e| {
            let names = toml::from_str(text)
                .ok()
                .and_then(|t| names_expected(toml::Value::Table(t), e.path()));
            let at = e.path().to_string();
            let e = e.into_inner();
            let mut message = out_of_range(&e.to_string(), text, e.span());
            if let Some(names) = names {
                message = message.replace(e.message(), &names);
            }
            let hint = sweep_file_hint(text);
            syntax(format!(
                "{}{}{hint}",
                explain(message.trim_end()),
                form_of(&at)
            ))
        })?;
    let mut table: toml::Table = toml::from_str(text).map_err(|e| syntax(e.to_string()))?;
    for own in ["compare", "experiment", "check"] {
        table.remove(own);
    }
    let overrides = overrides
        .iter()
        .map(|o| parse_override(o).map_err(|m| syntax(format!("--set {o}: {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    for (key, value) in &overrides {
        // The variants are read from the file before any override applies.
        if key == "compare" || key.starts_with("compare.") {
            return Err(syntax(format!(
                "--set {key}: the variants are the file's [[compare]] tables, which an \
                 override cannot change (it applies to every variant); edit the file"
            )));
        }
        let own = key.split('.').next().unwrap_or_default();
        if own == "experiment" || own == "check" {
            return Err(syntax(format!(
                "--set {key}: [{own}] describes the experiment, not a run; edit the file"
            )));
        }
        // The name also names the results folder, and a plain scenario's one run.
        if key == "name" {
            written.name = value
                .as_str()
                .ok_or_else(|| {
                    syntax(format!(
                        "--set name: expected a string, got {}",
                        error::written(value)
                    ))
                })?
                .to_string();
        }
    }
    let compare = !written.compare.is_empty();
    let variants = if !compare {
        vec![VariantSection {
            name: written.name.clone(),
            set: toml::Table::new(),
            points: None,
        }]
    } else {
        written.compare.clone()
    };
    let variants = match only {
        Some(names) => chosen(variants, names, compare).map_err(syntax)?,
        None => variants,
    };
    // The file's table with a variant's keys, then the command line's (which win over the
    // file, variants included), with every default filled in.
    let resolve = |name: &str, set: &toml::Table| -> Result<ScenarioFile, ScenarioError> {
        let mut t = table.clone();
        for (key, value) in set {
            let top = key.split('.').next().unwrap_or_default();
            if ["name", "compare", "experiment", "check"].contains(&top) {
                return Err(syntax(format!(
                    "variant `{name}`: set {{ \"{key}\" = {} }}: a variant sets the keys of a run; \
                     its name is its [[compare]] `name`, and the file's name, [[compare]], \
                     [experiment] and [[check]] belong to the whole file",
                    error::written(value)
                )));
            }
            set_dotted(&mut t, key, value.clone())
                .map_err(|(_, m)| syntax(format!("variant `{name}`: {key}: {m}")))?;
        }
        for (key, value) in &overrides {
            // The form of the key where the path went wrong: `workload.sizes` is not a table.
            set_dotted(&mut t, key, value.clone())
                .map_err(|(at, m)| syntax(format!("--set {key}: {m}{}", form_of(&at))))?;
        }
        overridden(name, set, &t, &overrides).map_err(syntax)?;
        // The merged table has no source text to point into, so an error names the key's path
        // instead (a value set by a variant or by `--set` has no line of its own).
        let merged = toml::Value::Table(t);
        let mut resolved: ScenarioFile =
            serde_path_to_error::deserialize(merged.clone()).map_err(|e| {
                let names = names_expected(merged, e.path());
                let at = e.path().to_string();
                let message = names.unwrap_or_else(|| explain(e.into_inner().message()));
                syntax(blame(&at, &message, &overrides, compare.then_some(name)))
            })?;
        resolved.topology.normalize(file)?;
        resolved.switch.normalize(file)?;
        resolved.load_balancing.normalize(file)?;
        let source_routed = (resolved.topology.routing).is_some_and(Routing::source_routed);
        if resolved.load_balancing.kind == BalancerKind::Fksp && !source_routed {
            return Err(invalid(
                file,
                "load_balancing.kind",
                "\"fksp\"",
                "fksp picks one of a flow's k shortest paths: set topology.routing = \"k-shortest\" \
                 or \"up-down\" (or use kind = \"ecmp\" over shortest paths)",
            ));
        }
        resolved.ordering.normalize(file)?;
        resolved.workload.normalize(file)?;
        if let Some(f) = resolved.failures.as_mut() {
            f.normalize(file)?;
        }
        Ok(resolved)
    };
    // Resolved, then checked and built.
    let mut workloads = workload::Workloads::default();
    let mut build = |name: &str,
                     set: &toml::Table|
     -> Result<(ScenarioFile, SimConfig, Vec<String>), ScenarioError> {
        let mut resolved = resolve(name, set)?;
        let (config, warnings) = validate(&resolved, (file, base_dir), &mut workloads)?;
        // A run that `"auto"` partitions says so, so a run of an earlier version, which took
        // its events in one order, is not read back as this one.
        if resolved.run.partitions.is_none() && Partitioning::for_run(&config).is_some() {
            resolved.run.partitions = Some(run::Partitions::Word("auto".into()));
        }
        Ok((resolved, config, warnings))
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut runs = Vec::with_capacity(variants.len());
    for v in variants {
        if !seen.insert(v.name.clone()) {
            return Err(invalid(
                file,
                "compare.name",
                &format!("{:?}", v.name),
                "variant names must be unique",
            ));
        }
        let (resolved, config, warnings) = match build(&v.name, &v.set) {
            Ok(built) => built,
            // A value only this variant makes invalid (a key its transport does not take,
            // say) names the variant; one every variant shares is reported as it is.
            Err(e @ ScenarioError::Invalid { .. })
                if compare && build(&v.name, &toml::Table::new()).is_ok() =>
            {
                return Err(e.in_variant(&v.name));
            }
            Err(e) if compare => return Err(override_in_variant(e, &v.name, &overrides)),
            Err(e) => return Err(e),
        };
        runs.push(Run {
            set_keys: dotted_keys(&v.set),
            points: v.points,
            name: v.name,
            inputs: inputs::input_files(&resolved, file, base_dir)?,
            resolved,
            config,
            warnings,
        });
    }
    let variants: Vec<experiment::VariantRuns> = (runs.iter())
        .map(|r| experiment::VariantRuns {
            name: &r.name,
            points: r.points.as_deref(),
            conweave: matches!(
                r.config.load_balancing,
                crate::forwarding::LoadBalancing::ConWeave(_)
            ),
            bottleneck: (r.config.monitor.as_ref()).is_some_and(|m| m.summary_from.is_some()),
            fct_buckets: r.config.fct_size_buckets.len() + 1,
        })
        .collect();
    // A sweep that runs some of the variants runs no experiment or check, which may name the
    // others: they are neither validated nor kept.
    if only.is_some() {
        (written.experiment, written.check) = (None, Vec::new());
    }
    experiment::validate(
        file,
        written.experiment.as_ref(),
        &written.check,
        &variants,
        compare,
    )?;
    // Not validated: it need not run alone, and building it (paths, traces) could take long.
    let base = compare
        .then(|| resolve(&written.name, &toml::Table::new()).ok())
        .flatten();
    Ok(Scenario {
        name: written.name,
        runs,
        compare,
        base,
        experiment: written.experiment,
        checks: written.check,
    })
}

/// `e`, for variant `name`: when an override (`--set`, a sweep's grid or `set`) gives a key
/// that does not apply to what the variant runs (a layer's key where it has none), it names the
/// variant and says why it cannot take the key, since an override applies to every variant;
/// otherwise `e` as it is.
fn override_in_variant(
    e: ScenarioError,
    name: &str,
    overrides: &[(String, toml::Value)],
) -> ScenarioError {
    match e {
        ScenarioError::Invalid {
            file,
            key,
            value,
            allowed,
        } if overrides.iter().any(|(k, _)| *k == key) && allowed.starts_with("does not apply") => {
            let why = allowed.split(": remove it").next().unwrap_or(&allowed);
            ScenarioError::Invalid {
                file,
                key: format!("variant `{name}`: {key}"),
                value,
                allowed: format!(
                    "{why}, which variant `{name}` runs; an override (--set, a sweep's [grid] or \
                     set) applies to every variant, so give the variants that take {key} a \
                     scenario of their own (the others' runs would not change with it)"
                ),
            }
        }
        other => other,
    }
}

/// The variants `names` chooses, in the file's order ([`check_variant_choice`]).
fn chosen(
    variants: Vec<VariantSection>,
    names: &[String],
    compare: bool,
) -> Result<Vec<VariantSection>, String> {
    let all: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let all = if compare { all } else { Vec::new() };
    check_variant_choice(&all, names).map_err(|e| format!("a sweep's variants: {e}"))?;
    Ok(variants
        .into_iter()
        .filter(|v| names.contains(&v.name))
        .collect())
}

/// Whether `names` (a sweep's `variants`) chooses among a scenario's `[[compare]]` variants
/// `all` (empty without any): at least one, each a variant's name, none twice.
pub fn check_variant_choice(all: &[&str], names: &[String]) -> Result<(), String> {
    if all.is_empty() {
        return Err(
            "the scenario has no [[compare]] variants to choose from; leave `variants` out".into(),
        );
    }
    if names.is_empty() {
        return Err(format!(
            "name at least one of the scenario's [[compare]] variants: {all:?}"
        ));
    }
    for (i, name) in names.iter().enumerate() {
        if !all.contains(&name.as_str()) {
            return Err(format!(
                "{name:?} is not one of the scenario's [[compare]] variants: {all:?}"
            ));
        }
        if names[..i].contains(name) {
            return Err(format!("{name:?} is named twice"));
        }
    }
    Ok(())
}

/// An error at `at` in the merged scenario, with its origin: the `--set` whose key is `at` or
/// holds or lies inside it (the file itself passed the first pass, and `--set` wins over the
/// variant it is merged into), else the variant's `set`, if any.
/// Whether dotted key `a` is `b` or lies inside it (`transport.cc` within `transport`).
fn within(a: &str, b: &str) -> bool {
    a == b || a.strip_prefix(b).is_some_and(|r| r.starts_with('.'))
}

/// Refuses an override (`--set`, a sweep's grid, an experiment's point) that replaces a value
/// variant `name` sets (`set`) in its table `t`: it applies to every variant, so each would
/// run the override's value under a name that says otherwise. A variant's table set whole may
/// gain keys it does not name; an override equal to the variant's value changes nothing; and
/// `seed` is the seeds' to set (each run's seed is in its folder's name and its table's row).
fn overridden(
    name: &str,
    set: &toml::Table,
    t: &toml::Table,
    overrides: &[(String, toml::Value)],
) -> Result<(), String> {
    let mut own = Vec::new();
    for (key, value) in set {
        overrides::leaves(key, value, &mut own);
    }
    // Seeds (a sweep's `seeds`, reproduce's repetitions) are set over a variant's own.
    for (key, value) in own.into_iter().filter(|(key, _)| key != "seed") {
        let now = overrides::get_dotted(t, &key);
        if now == Some(&value) {
            continue;
        }
        let Some((by, _)) = (overrides.iter()).find(|(k, _)| within(k, &key) || within(&key, k))
        else {
            continue;
        };
        let now = now.map_or("nothing".to_string(), error::written);
        return Err(format!(
            "variant `{name}` sets {key} = {}, and `{by}`, given for every variant (by --set, \
             a sweep's grid or an experiment's point), makes it {now}: each variant would run \
             that under its own name; set the key in every variant's `set` instead, or leave \
             it out of the variants",
            error::written(&value)
        ));
    }
    Ok(())
}

fn blame(
    at: &str,
    message: &str,
    overrides: &[(String, toml::Value)],
    variant: Option<&str>,
) -> String {
    let form = form_of(at);
    match overrides
        .iter()
        .find(|(k, _)| within(k, at) || within(at, k))
    {
        Some((key, _)) if key == at => format!("--set {key}: {message}{form}"),
        Some((key, _)) => format!("--set {key}: {at}: {message}{form}"),
        None => match variant {
            Some(name) => format!("variant `{name}`: {at}: {message}{form}"),
            None => format!("{at}: {message}{form}"),
        },
    }
}

/// The form a key's value is written in, for an error about its type: for a size, rate or
/// duration key, an example with the units (serde says only "expected a string"); for a key
/// inside `workload.sizes`, which is a name or a table of exactly one key, how to write a
/// distribution whole: the dotted key `workload.sizes.fixed` reads as a second key beside the
/// file's, or as a key of a name, and serde's words for that ("wanted exactly 1 element",
/// "unit variant") do not say what to write. A key that also takes a word (`"auto"`, `"off"`)
/// says so.
fn form_of(key: &str) -> String {
    if let Some((_, range)) = WHOLE_NUMBER_KEYS.iter().find(|(k, _)| *k == key) {
        // serde's range is the type's; the key's own is narrower.
        return format!(" ({key} takes a whole number {range})");
    }
    let form = unit_form(key);
    match WORD_KEYS.iter().find(|(k, _)| *k == key) {
        Some((_, word)) if !form.is_empty() => format!("{form}, or {word}"),
        _ => form.to_string(),
    }
}

/// Whole-number keys whose allowed values are far narrower than their type's, as the
/// reference gives them.
const WHOLE_NUMBER_KEYS: &[(&str, &str)] = &[
    ("transport.mtu", "from 64 to 4096 (bytes)"),
    ("ordering.pool_blocks", "from 1 to 65536"),
    ("ordering.max_connections", "from 1 to 65536"),
    ("ordering.block_bits", "8, 16, 32 or 64"),
];

/// The keys whose value may also be a word, and the word.
const WORD_KEYS: &[(&str, &str)] = &[
    ("switch.pfc_threshold", "\"auto\""),
    ("switch.pfc_resume_gap", "\"auto\""),
    ("switch.pfc_refresh", "\"auto\""),
    ("switch.credit_interval", "\"auto\""),
    ("transport.rto_high", "\"auto\""),
    ("transport.nack_interval", "\"off\""),
];

/// [`form_of`] for the value's unit or shape alone.
fn unit_form(key: &str) -> &'static str {
    // `run.fct_size_buckets[0]`: a list's item is written as the list's key says.
    let last = key.rsplit('.').next().unwrap_or(key);
    let name = last.split('[').next().unwrap_or(last);
    let pause_control = key.starts_with("pause_control");
    if key == "workload.sizes" || key.starts_with("workload.sizes.") {
        "; `sizes` is \"irn-default\", \"alistorage\", \"fb-hadoop\", \"websearch\", \
         \"fb-hadoop-hpcc\" or a table of one key: \
         write a distribution whole: --set 'workload.sizes={ fixed = \"1MB\" }' (or \
         { cdf = \"file\" }, { uniform = [\"500KB\", \"5MB\"] })"
    } else if DURATION_KEYS.contains(&name) {
        "; write a duration as a string with its unit, e.g. \"10us\" (ps, ns, us, ms, s)"
    } else if RATE_KEYS.contains(&name) && !key.contains("lossy_link") {
        "; write a rate as a string with its unit, e.g. \"100Gbps\" (bps, Kbps, Mbps, Gbps, Tbps)"
    } else if SIZE_KEYS.contains(&name) {
        "; write a size as a string with its unit, e.g. \"240KB\" (B, KB, MB, GB, KiB, MiB, GiB)"
    } else if name == "gap" || name == "length" {
        "; write a duration, e.g. \"5ms\", or a [low, high] pair of them, e.g. [\"0ms\", \"20ms\"]"
    } else if key.ends_with("topology.k") || key.ends_with("site.k") || key.ends_with("site_b.k") {
        "; a fat-tree's k is an even whole number from 2 to 64"
    } else if name == "deflection_ttl" {
        "; deflection_ttl is at least 1"
    } else if name == "nodes" {
        "; write a link as its two nodes, e.g. nodes = [8, 12]"
    } else if key == "transport.tx_window" {
        "; write a packet count, e.g. 64, or \"auto\" (the BDP cap) or \"off\""
    } else if key == "ordering.cap" {
        "; write a number of bits, e.g. 256 (a multiple of block_bits), or \"none\""
    } else if name == "ports" && (pause_control || key.starts_with("monitor")) {
        "; write a port selector, e.g. \"switch\", \"uplinks\", \"switch:3:downlinks\" or \"host:5\", \
         or a list of them"
    } else if pause_control && ["threshold", "height", "constant", "resume"].contains(&name) {
        "; write a size, e.g. \"100KB\", or a number of longest pauses' worth of data, e.g. 2"
    } else {
        ""
    }
}

/// The keys (last part) whose value is a duration string; `tests/extreme_values.rs` checks
/// that every such key of the scenario format is listed, and [`RATE_KEYS`], [`SIZE_KEYS`] too.
const DURATION_KEYS: &[&str] = &[
    "link_delay",
    "delay",
    "rto_low",
    "rto_high",
    "retransmit_delay",
    "nack_interval",
    "duration",
    "background_duration",
    "warmup",
    "measure_until",
    "drain_limit",
    "interval",
    "flowlet_gap",
    "reply_extra",
    "path_busy",
    "inactive",
    "flush_slack",
    "default_wait",
    "sample_interval",
    "write_last_delay",
    "credit_interval",
    "pfc_refresh",
    "start",
    "reconvergence",
    "at",
    "for",
    "summary_from",
];
/// The keys whose value is a rate string (a lossy link's `rate` is a probability).
const RATE_KEYS: &[&str] = &["link_rate", "bottleneck_rate", "spine_link_rate", "rate"];
/// The keys whose value is a size string.
const SIZE_KEYS: &[&str] = &[
    "buffer",
    "header_overhead",
    "data_framing",
    "reply_frame",
    "total",
    "size",
    "pfc_threshold",
    "pfc_resume_gap",
    "ecn_kmin",
    "ecn_kmax",
    "fct_size_buckets",
];

/// For an enum key given a value that is not a string (`ordering.kind = 0`), the names it
/// takes and the value given: serde says neither ("wanted string or table", "unit variant,
/// expected string only"). The names are serde's own, read from its error for a string that
/// names no variant, so they cannot drift from the code; `None` when the key at `at` is not
/// such an enum.
fn names_expected(mut merged: toml::Value, at: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut slot = &mut merged;
    for segment in at.iter() {
        slot = match segment {
            Segment::Map { key } => slot.as_table_mut()?.get_mut(key)?,
            Segment::Seq { index } => slot.as_array_mut()?.get_mut(*index)?,
            _ => return None,
        };
    }
    if slot.is_str() || slot.is_table() {
        return None;
    }
    let got = error::written(slot);
    *slot = toml::Value::String("?".into());
    let probe = serde_path_to_error::deserialize::<_, ScenarioFile>(merged).err()?;
    if probe.path().to_string() != at.to_string() {
        return None;
    }
    let message = probe.into_inner().message().to_string();
    let (_, names) = message.split_once("unknown variant `?`, expected ")?;
    let names: Vec<String> = (names.split('`').skip(1).step_by(2))
        .map(|n| format!("{n:?}"))
        .collect();
    Some(format!("expected one of {}; got {got}", names.join(", ")))
}

/// For serde's "unknown field `laod`, expected one of `kind`, `load`, …" (or "unknown variant
/// `drll`, …"): "; did you mean `load`?" with the nearest allowed name, when one is near
/// enough to be a typo; empty otherwise. For any file irn reads with serde.
pub fn typo_hint(message: &str) -> String {
    let named = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.split_once(p).map(|(_, rest)| rest));
    let Some((written, rest)) = named.and_then(|rest| rest.split_once('`')) else {
        return String::new();
    };
    let Some((_, expected)) = rest.split_once("expected ") else {
        return String::new();
    };
    if let Some((_, meant)) = OTHER_NAMES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(written))
    {
        return format!("; {meant}");
    }
    // `a`, `b` or `c`: every other piece between backquotes is a name.
    let names = expected.split('`').skip(1).step_by(2);
    let hint = error::did_you_mean(written, names.clone());
    if hint.is_empty() && names.eq(["name", "set", "points"]) {
        // A `[[compare]]` entry written like the scenario (`transport.kind = "roce"`).
        return format!(
            "; a variant changes the scenario's keys through its `set`: \
             set = {{ \"{written}.KEY\" = VALUE }}"
        );
    }
    hint
}

/// Names ns-3's RDMA models use (their `config.txt` keys, lower-cased) and ones a reader of
/// the papers may write, with what irn has instead: a nearest spelling would mislead
/// (`ack_interval` is nothing like `nack_interval`).
const OTHER_NAMES: &[(&str, &str)] = &[
    (
        "ack_interval",
        "irn's receivers acknowledge every data packet (ns-3's L2_ACK_INTERVAL 1); there is \
         no key for it",
    ),
    (
        "l2_ack_interval",
        "irn's receivers acknowledge every data packet (ns-3's L2_ACK_INTERVAL 1); there is \
         no key for it",
    ),
    (
        "l2_chunk_size",
        "irn has no chunking of messages (ns-3's L2_CHUNK_SIZE); a message is sent in \
         transport.mtu packets",
    ),
    (
        "go-back-n",
        "RoCE's go-back-N is transport.kind = \"roce\"; IRN's transport with go-back-N in place \
         of selective repeat is \"irn-go-back-n\"",
    ),
    (
        "gbn",
        "RoCE's go-back-N is transport.kind = \"roce\"; IRN's transport with go-back-N in place \
         of selective repeat is \"irn-go-back-n\"",
    ),
    ("enable_pfc", "PFC is switch.pfc = true"),
    ("enable_irn", "IRN is transport.kind = \"irn\""),
    (
        "cc_mode",
        "congestion control is transport.cc (\"dcqcn\", \"hpcc\", \"timely\", …)",
    ),
    (
        "buffer_size",
        "a switch's buffer is switch.buffer, e.g. \"9MB\"",
    ),
    (
        "kmin",
        "the ECN thresholds are switch.ecn_kmin, switch.ecn_kmax and switch.ecn_pmax",
    ),
    (
        "kmax",
        "the ECN thresholds are switch.ecn_kmin, switch.ecn_kmax and switch.ecn_pmax",
    ),
    (
        "pmax",
        "the ECN thresholds are switch.ecn_kmin, switch.ecn_kmax and switch.ecn_pmax",
    ),
];

/// Whether `text` is a sweep file's: TOML that names its `scenario` and has a `[grid]`.
pub fn is_sweep_text(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .is_ok_and(|t| t.contains_key("scenario") && t.contains_key("grid"))
}

/// For a sweep file read as a scenario: how to run it instead; empty otherwise.
fn sweep_file_hint(text: &str) -> &'static str {
    if is_sweep_text(text) {
        "\nthis is a sweep file (a `scenario` and its `[grid]`): run it with `irn sweep`"
    } else {
        ""
    }
}

/// serde's names for integer types said as ranges: "expected u32" reads "expected a whole
/// number from 0 to 4294967295"; and a misspelt name with the name meant.
fn explain(message: &str) -> String {
    let mut out = message.to_string();
    for (ty, range) in [
        ("u8", "0 to 255"),
        ("u16", "0 to 65535"),
        ("u32", "0 to 4294967295"),
        ("u64", "0 to 9223372036854775807 (the largest TOML integer)"),
        ("i64", "-9223372036854775808 to 9223372036854775807"),
    ] {
        let from = format!("expected {ty}");
        if let Some(at) = out.find(&from) {
            let end = at + from.len();
            if !out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                out.replace_range(at..end, &format!("expected a whole number from {range}"));
            }
        }
    }
    // irn's own type names mean nothing in a scenario file: say the form instead.
    for (serde_says, form) in [
        (
            "data did not match any variant of untagged enum ",
            "not a value this key takes",
        ),
        ("expected struct ", "expected a table of keys"),
    ] {
        if let Some(at) = out.find(serde_says) {
            let name = out[at + serde_says.len()..]
                .find(|c: char| !c.is_ascii_alphanumeric())
                .map_or(out.len(), |n| at + serde_says.len() + n);
            out.replace_range(at..name, form);
        }
    }
    for (serde_says, form) in [
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected a list"),
    ] {
        if let Some(at) = out.find(serde_says) {
            let end = at + serde_says.len();
            if !out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                out.replace_range(at..end, form);
            }
        }
    }
    // A float's 309 digits (`1e308` as serde prints it), as TOML writes it.
    const FLOAT: &str = "floating point `";
    if let Some(at) = out.find(FLOAT) {
        let start = at + FLOAT.len();
        if let Some(len) = out[start..].find('`') {
            if let Ok(v) = out[start..start + len].parse::<f64>() {
                out.replace_range(start..start + len, &real(v));
            }
        }
    }
    out.push_str(&typo_hint(message));
    out
}

/// The TOML parser's "number too large to fit in target type", said as what it is: the
/// key (read from the line at `span` in `text`) holds an integer beyond TOML's range.
fn out_of_range(message: &str, text: &str, span: Option<std::ops::Range<usize>>) -> String {
    const TOO_LARGE: &str = "number too large to fit in target type";
    if !message.contains(TOO_LARGE) {
        return message.to_string();
    }
    let line_start = span.map_or(0, |s| {
        text[..s.start.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1)
    });
    let key = text[line_start..]
        .split(['=', '\n'])
        .next()
        .unwrap_or("")
        .trim();
    // Under the table the line sits in, if any: `[topology]` then `k = …` is `topology.k`.
    let table = (text[..line_start].lines().rev().map(str::trim))
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(['[', ']']).trim());
    let key = match table {
        Some(table) => format!("{table}.{key}"),
        None => key.to_string(),
    };
    message.replace(
        TOO_LARGE,
        &format!(
            "{key}: out of range: an integer in a scenario lies between -9223372036854775808 \
             and 9223372036854775807 (TOML's range; a key's own range is in \
             scenarios/example.toml)"
        ),
    )
}

/// `topology` routed over every shortest path by name, under ConWeave (its source ToRs pick
/// among them); as it is otherwise.
fn conweave_paths(
    s: &ScenarioFile,
    file: &str,
    topology: crate::topology::Topology,
) -> Result<crate::topology::Topology, ScenarioError> {
    if s.load_balancing.kind != BalancerKind::Conweave {
        return Ok(topology);
    }
    if topology.source_routed() {
        return Err(invalid(
            file,
            "load_balancing.kind",
            "\"conweave\"",
            "not with topology.routing = \"k-shortest\" or \"up-down\": ConWeave routes over the \
             shortest paths between ToRs, which it names itself",
        ));
    }
    topology
        .with_shortest_paths()
        .map_err(|e| invalid(file, "load_balancing.kind", "\"conweave\"", &e.to_string()))
}

/// The most a Poisson workload's packets, headers included, may offer the hosts' NICs, as a
/// multiple of what they send: past it the flows pile up without end (each holding its
/// endpoints' state) and memory runs out long before the run ends. Loads up to 1 of the usual
/// sizes stay below (headers add a few percent); tiny flows at a high load do not (1 B flows
/// at 0.7 offer 44 times what a NIC sends).
const MAX_OFFERED_WIRE_LOAD: f64 = 1.5;

/// Refuses a Poisson workload whose flows, with each packet's headers, offer the hosts more
/// than [`MAX_OFFERED_WIRE_LOAD`] times what their NICs send: its load (of payload bytes)
/// times the bytes its flows' packets carry over the bytes their arrivals were drawn for
/// (`drawn_bytes`: an atomic of a verbs mix carries 8 bytes in place of the size drawn for it).
/// (The load the flows happen to offer in a short window varies with a heavy-tailed size
/// distribution; the headers' share does not.)
fn check_offered_load(
    s: &ScenarioFile,
    file: &str,
    (flows, drawn_bytes): (&[crate::workload::FlowSpec], u64),
    (mtu, overhead): (u64, u64),
) -> Result<(), ScenarioError> {
    let Some(load) = s.workload.load else {
        return Ok(());
    };
    let payload: u64 = flows.iter().map(|f| f.size_bytes).sum();
    let headers: u64 = flows
        .iter()
        .map(|f| f.size_bytes.div_ceil(mtu) * overhead)
        .sum();
    if drawn_bytes == 0 {
        return Ok(());
    }
    let offered = load * (payload + headers) as f64 / drawn_bytes as f64;
    if offered <= MAX_OFFERED_WIRE_LOAD {
        return Ok(());
    }
    Err(invalid(
        file,
        "workload.load",
        &load.to_string(),
        &format!(
            "with headers the flows' packets offer the NICs {offered:.1} times what they send \
             (flows of {:.0} B on average, {overhead} B of headers a packet): the flows would \
             pile up without end, each holding its state, until memory runs out; at most \
             {MAX_OFFERED_WIRE_LOAD} times: lower the load or use larger flows",
            payload as f64 / flows.len() as f64
        ),
    ))
}

/// Turns a resolved, normalized scenario into a runnable configuration, one section at a time.
/// The order is the one errors are reported in, and each step takes what the ones before it
/// settled: the frame needs the transport's headers and the ordering layer's, PFC's headroom
/// the frame, the timers PFC's losses.
fn validate(
    s: &ScenarioFile,
    (file, base_dir): (&str, &Path),
    workloads: &mut workload::Workloads,
) -> Result<(SimConfig, Vec<String>), ScenarioError> {
    let (topology, link_loss) = topology::build(&s.topology, file, base_dir, s.seed)?;
    let topology = conweave_paths(s, file, topology)?;
    let buffer = switch::buffer(s, file)?;
    let t = &s.transport;
    let extra_header_bytes = transport::extra_header_bytes(t, file)?;
    let verbs = workload::verbs_mix(s, file, extra_header_bytes)?;
    let ordering = ordering_layer(s, file, verbs.as_ref())?;
    // The layer's per-packet metadata travels like any extra header, and so does INT's.
    let int_hops = telemetry(s, file, &topology, verbs.is_some())?;
    let int_header = int_hops.map_or(0, |_| irn_core::cc::int::INT_HEADER_BYTES);
    let extra_header_bytes = extra_header_bytes + ordering.mode.metadata_bytes() + int_header;
    let framing = transport::framing(t, file, verbs.is_some())?;
    let verbs_irn_headers = t.kind != TransportKind::Roce;
    let max_frame =
        crate::config::max_frame_bytes(
            t.mtu,
            framing.data + extra_header_bytes,
            verbs.is_some() && verbs_irn_headers,
        ) + u64::from(int_hops.map_or(0, |n| n as u32 * irn_core::cc::int::INT_HOP_BYTES));
    let credits = credits::build(s, file, &topology, buffer.bytes, max_frame)?;
    if credits.is_some() && !link_loss.is_none() {
        // A lost packet would leave its credit counted upstream and never at the input.
        let (key, value) = match s.topology.loss_rate {
            Some(rate) => ("topology.loss_rate", rate.to_string()),
            None if !s.topology.lossy_link.is_empty() => ("topology.lossy_link", SET.into()),
            None => (
                "topology.file",
                format!("{:?}", s.topology.file.as_deref().unwrap_or("")),
            ),
        };
        return Err(invalid(
            file,
            key,
            &value,
            "no link loss with `[switch] credits`: credit flow control assumes a link that \
             loses nothing",
        ));
    }
    let grants = credits.is_some_and(|c| c.rule == crate::credits::CreditRule::PauseEquivalent);
    let controls = pause::controls(
        s,
        file,
        &topology,
        (buffer.bytes, buffer.model),
        max_frame,
        grants,
    )?;
    let controlled: Vec<_> = controls.controls.iter().map(|c| c.port).collect();
    let (pfc, pfc_drops) = switch::pfc(s, file, &topology, &buffer, max_frame, &controlled)?;
    // Why packets can be lost though PFC is on: then timeouts must stay on.
    let pfc_drops = pfc_drops.or(controls.drops).or_else(|| {
        let lossy = (!link_loss.is_none()).then_some("lossy links lose packets on the wire");
        let failing = s
            .failures
            .is_some()
            .then_some("[failures]: failing links lose packets");
        lossy.or(failing).map(String::from)
    });
    let pause_sources = pause::sources(s, file, &topology)?;
    let auto_rto_high = crate::config::rto_high_auto(
        &topology,
        buffer.bytes,
        buffer.model,
        s.switch.pfc,
        max_frame,
    );
    let (transport, ecn, rto_high_warning) = transport::build(
        s,
        file,
        &topology,
        (framing, extra_header_bytes, max_frame),
        pfc_drops,
        auto_rto_high,
    )?;
    cnp_carrier_fits(file, &transport.cc, &ordering, verbs.is_some())?;
    let (bdp_cap_scope, bdp_round_trip) = transport::bdp_cap_rule(&s.transport, file, &transport)?;
    let deflection = switch::deflection(s, file)?;
    let workload::Built {
        flows,
        dag,
        collectives,
        fct_ports,
        drawn_bytes,
    } = workloads.get(s, (file, base_dir), &topology, verbs)?;
    if s.workload.kind == WorkloadKind::Poisson {
        let overhead = max_frame.saturating_sub(u64::from(t.mtu));
        check_offered_load(s, file, (&flows, drawn_bytes), (u64::from(t.mtu), overhead))?;
    }
    let run::RunLimits {
        warmup,
        measure_until,
        drain_limit,
        fct_size_buckets,
        partitions,
    } = run::build(&s.run, file)?;
    let failures = failures_timeline(s, file, &topology, credits.is_some(), &flows, drain_limit)?;
    // The latest a run may stop, when the flows' starts are known before it runs (a run of
    // flows that wait for others has none before it runs).
    let horizon = dag
        .is_none()
        .then(|| flows.last().map_or(irn_core::Time::ZERO, |f| f.start) + drain_limit);
    let late_failures = (s.failures.as_ref())
        .zip(horizon)
        .map(|(f, end)| failures::never_reached(f, end))
        .unwrap_or_default();
    let late_pauses = (s.pauses.as_ref().and_then(|p| p.start.as_deref()))
        .zip(horizon)
        .and_then(|(start, end)| {
            failures::past_the_end("pauses.start", start, end, "no host pauses")
        });
    let monitor = (s.monitor.as_ref())
        .map(|m| monitor::build(m, file, &topology, (flows.len(), horizon)))
        .transpose()?;
    let mut warnings = controls.warnings;
    warnings.extend(rto_high_warning);
    warnings.extend(rto_warning(&transport.rto, &topology));
    warnings.extend(credits::interval_warning(credits.as_ref(), &topology));
    warnings.extend(credits::window_warning(credits.as_ref(), &topology));
    warnings.extend(late_failures);
    warnings.extend(late_pauses);
    warnings.extend(topology::parallel_links_warning(&s.topology, &topology));
    warnings.extend(switch::idle_deflection(s));
    warnings.extend(switch::inert_pfc_keys(s));
    warnings.extend(switch::uniform_rate_keys(s, &topology));
    warnings.extend(switch::unreachable_marking(
        s,
        &topology,
        &buffer,
        ecn.as_ref(),
    ));
    warnings.extend(load_balancing::single_path_warning(s, &topology));
    let config = SimConfig {
        seed: s.seed,
        topology,
        switch: SwitchConfig {
            model: buffer.model,
            buffer_bytes: buffer.bytes,
            pfc,
            ecn,
        },
        transport,
        flows,
        dag,
        collectives,
        fct_ports,
        warmup,
        measure_until,
        drain_limit,
        extra_header_bytes,
        framing,
        verbs_irn_headers,
        initial_psn: InitialPsn::Seeded,
        load_balancing: s.load_balancing.to_balancing(file)?,
        control_balancing: s
            .load_balancing
            .control
            .map_or(ControlBalancing::Balanced, Control::to_balancing),
        fct_size_buckets,
        ordering,
        monitor,
        pause_control: controls.controls,
        pause_sources,
        credits,
        deflection,
        failures,
        bdp_cap_scope,
        bdp_round_trip,
        link_loss,
        partitions,
    };
    if let (PartitionRule::At(_), Err(why)) = (partitions, Partitioning::try_for_run(&config)) {
        return Err(invalid(
            file,
            "run.partitions",
            &(s.run.partitions.as_ref()).map_or(String::new(), ToString::to_string),
            &format!("\"auto\" or \"off\" here: this run cannot be partitioned, since {why}"),
        ));
    }
    warnings.extend(crate::sim::unsampled_ordering(&config));
    Ok((config, warnings))
}

/// In-band telemetry: with `cc = "hpcc"` or `"powertcp"` but its θ variant (unless `kind =
/// "mp-rdma"`, whose own window ignores `cc`), the most records a packet gathers, one per
/// switch of the longest path; `None` without. Refused with a verbs workload (whose queue pairs
/// would need the records passed through both ends) and on paths longer than a controller's
/// per-hop state.
fn telemetry(
    s: &ScenarioFile,
    file: &str,
    topology: &crate::topology::Topology,
    verbs: bool,
) -> Result<Option<usize>, ScenarioError> {
    let t = &s.transport;
    if !transport::wants_int(t) || t.kind == TransportKind::MpRdma {
        return Ok(None);
    }
    let cc = match t.cc {
        CcKind::Hpcc => ("\"hpcc\"", "HPCC"),
        _ => ("\"powertcp\"", "PowerTCP"),
    };
    if verbs {
        return Err(invalid(
            file,
            "transport.cc",
            cc.0,
            &format!(
                "not with a verbs workload (workload.verbs): {} runs under message flows",
                cc.1
            ),
        ));
    }
    let hops = topology.max_path_switches();
    if hops > irn_core::cc::int::MAX_INT_HOPS {
        return Err(invalid(
            file,
            "transport.cc",
            cc.0,
            &format!(
                "a topology whose paths cross at most {} switches (this one's cross {hops}): \
                 {} keeps state per hop",
                irn_core::cc::int::MAX_INT_HOPS,
                cc.1
            ),
        ));
    }
    Ok(Some(hops))
}

/// A retransmission timeout shorter than the longest path's round trip (a WAN's) fires before
/// any acknowledgement can come back: allowed, but every flow across that path times out.
fn rto_warning(rto: &RtoPolicy, topology: &crate::topology::Topology) -> Option<String> {
    let rtt = topology.max_path_propagation() * 2;
    let shortest = match *rto {
        RtoPolicy::Disabled => return None,
        RtoPolicy::Fixed(d) => ("transport.rto_high", d),
        RtoPolicy::Dual { low, .. } => ("transport.rto_low", low),
    };
    (shortest.1 < rtt).then(|| {
        format!(
            "{} = {} is shorter than the longest path's round-trip propagation ({}): flows \
             on it time out before an acknowledgement can return; set the timeouts above it",
            shortest.0,
            shortest.1,
            about(rtt)
        )
    })
}

/// The NICs' ordering layer, checked against the transport and the flows it sits under.
fn ordering_layer(
    s: &ScenarioFile,
    file: &str,
    verbs: Option<&VerbMix>,
) -> Result<Ordering, ScenarioError> {
    let t = &s.transport;
    let ordering = s.ordering.to_ordering(file)?;
    if ordering.mode != OrderingMode::None {
        let kind = format!("\"{}\"", s.ordering.kind_name());
        if matches!(t.kind, TransportKind::Tcp | TransportKind::MpRdma) {
            return Err(invalid(file, "ordering.kind", &kind,
                &format!("an ordering layer runs under the RDMA transports (irn, roce and their variants), not {} (MP-RDMA keeps its own bitmap)", t.kind.name())));
        }
        if verbs.is_some() {
            return Err(invalid(
                file,
                "ordering.kind",
                &kind,
                "not yet with workload.verbs: the ordering layer sits under message flows only",
            ));
        }
    }
    Ok(ordering)
}

/// DCQCN's CNPs on replies need the RDMA receiver's own ACKs to reach the sender: an ordering
/// layer sends one reply per run it delivers, and a verbs responder answers per operation.
fn cnp_carrier_fits(
    file: &str,
    cc: &irn_core::cc::CcConfig,
    ordering: &Ordering,
    verbs: bool,
) -> Result<(), ScenarioError> {
    let irn_core::cc::CcConfig::Dcqcn(p) = cc else {
        return Ok(());
    };
    if p.cnp_carrier != irn_core::cc::CnpCarrier::Ack {
        return Ok(());
    }
    let conflict = if ordering.mode != OrderingMode::None {
        "an ordering layer (ordering.kind), which answers with one reply per delivered run"
    } else if verbs {
        "a verbs workload (workload.verbs), whose responders answer per operation"
    } else {
        return Ok(());
    };
    Err(invalid(
        file,
        "transport.dcqcn.cnp_carrier",
        "\"ack\"",
        &format!("not with {conflict}: a CNP would be lost with the replies; use \"frame\""),
    ))
}

/// A data file named in the scenario: a relative path is relative to the scenario's folder.
fn resolve(base_dir: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base_dir.join(path)
    }
}

/// `[failures]`'s timeline up to the run's horizon (its last arrival plus the drain limit);
/// refused with credits (a packet lost to a failure would keep its credit).
fn failures_timeline(
    s: &ScenarioFile,
    file: &str,
    topology: &crate::topology::Topology,
    credits: bool,
    flows: &[crate::workload::FlowSpec],
    drain_limit: irn_core::Duration,
) -> Result<Option<crate::failures::Timeline>, ScenarioError> {
    let Some(f) = &s.failures else {
        return Ok(None);
    };
    if credits {
        return Err(invalid(
            file,
            "failures",
            SET,
            "not with `[switch] credits`: a packet lost to a failure would keep its credit",
        ));
    }
    let horizon = flows.last().map_or(irn_core::Time::ZERO, |f| f.start) + drain_limit;
    failures::build(f, file, topology, s.seed, horizon).map(Some)
}

/// Every leaf key of a `set` table, dotted: `{ "ordering.cap" = "none" }` and
/// `{ ordering = { cap = "none" } }` both give `ordering.cap`.
fn dotted_keys(set: &toml::Table) -> Vec<String> {
    let mut leaves = Vec::new();
    for (key, value) in set {
        overrides::leaves(key, value, &mut leaves);
    }
    leaves.into_iter().map(|(key, _)| key).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scenario's one run, its arrivals cut to 10 us so the test builds few flows.
    pub(super) fn one(text: &str) -> Result<Run, ScenarioError> {
        let overrides = ["workload.duration=10us".to_string()];
        parse(text, "t.toml", Path::new("."), &overrides).map(|mut s| s.runs.remove(0))
    }

    /// The error a scenario file's `text` gets.
    fn file_error(text: &str) -> String {
        parse(text, "t.toml", Path::new("."), &[])
            .unwrap_err()
            .to_string()
    }

    /// An ordering layer whose memory would never be sampled (no multiple of its interval in
    /// the window of arrivals) is warned of; one sampled at least once is not.
    #[test]
    fn an_ordering_layer_never_sampled_is_warned_of() {
        let text = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nduration = \"50us\"\n\
                    [ordering]\nkind = \"eunomia\"\n";
        let warned = |overrides: &[String]| {
            let s = parse(text, "t.toml", Path::new("."), overrides).unwrap();
            s.runs[0].warnings.iter().any(|w| {
                w.contains("ordering.sample_interval = 1ms: no multiple of it falls in the window")
            })
        };
        assert!(warned(&[]));
        assert!(!warned(&["ordering.sample_interval=\"10us\"".into()]));
    }

    /// A balancer or ordering layer on a network of one path per pair of hosts changes nothing:
    /// warned of on a star, not on a leaf-spine.
    #[test]
    fn balancing_a_single_path_network_is_warned_of() {
        let warned = |topology: &str, keys: &str| {
            let text = format!("[topology]\n{topology}[workload]\nduration = \"10us\"\n{keys}");
            let s = parse(&text, "t.toml", Path::new("."), &[]).unwrap();
            s.runs[0]
                .warnings
                .iter()
                .any(|w| w.contains("one path between any two hosts"))
        };
        let star = "kind = \"star\"\nhosts = 4\n";
        let leaf_spine = "kind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n";
        assert!(warned(star, "[load_balancing]\nkind = \"drill\"\n"));
        assert!(warned(star, "[ordering]\nkind = \"ideal\"\n"));
        assert!(!warned(star, ""));
        assert!(!warned(leaf_spine, "[load_balancing]\nkind = \"drill\"\n"));
    }

    /// A whole number of the wrong type names the key's own range, not only its type's.
    #[test]
    fn a_whole_number_key_names_its_own_range() {
        let err = parse(
            "",
            "t.toml",
            Path::new("."),
            &["transport.mtu=1000.5".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.ends_with("(transport.mtu takes a whole number from 64 to 4096 (bytes))"),
            "{err}"
        );
    }

    /// DIBS under PFC without an egress threshold never deflects: warned of; with the threshold
    /// it acts, and is not.
    #[test]
    fn dibs_that_can_never_act_is_warned_of() {
        let text = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nduration = \"10us\"\n\
                    [switch]\nmodel = \"shared-buffer\"\npfc = true\ndeflection = \"dibs\"\n";
        let warned = |overrides: &[String]| {
            let s = parse(text, "t.toml", Path::new("."), overrides).unwrap();
            s.runs[0]
                .warnings
                .iter()
                .any(|w| w.contains("nothing is deflected"))
        };
        assert!(warned(&[]));
        assert!(!warned(&["switch.egress_alpha=1".into()]));
    }

    /// An override of a key that a variant's kind does not take names that variant and says
    /// an override applies to every variant (it said to set the whole section, which a grid
    /// cannot).
    #[test]
    fn an_override_a_variant_cannot_take_names_the_variant() {
        let text = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nduration = \"10us\"\n\
                    [[compare]]\nname = \"ECMP\"\n\
                    [[compare]]\nname = \"Eunomia\"\nset = { \"ordering.kind\" = \"eunomia\" }\n";
        let err = parse(
            text,
            "t.toml",
            Path::new("."),
            &["ordering.pool_blocks=48".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(
                "variant `ECMP`: ordering.pool_blocks is set: does not apply to ordering.kind = \
                 \"none\", which variant `ECMP` runs; an override"
            ),
            "{err}"
        );
    }

    /// An override (`--set`, a sweep's grid, an experiment's point) applies to every variant:
    /// one that would replace a value a variant sets is refused, naming both, since every
    /// variant would run the override's value under its own name. One that agrees with the
    /// variant, or adds a key to a table the variant sets whole, changes nothing it said.
    #[test]
    fn an_override_never_replaces_what_a_variant_sets() {
        let text = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nduration = \"10us\"\n\
                    [[compare]]\nname = \"irn\"\nset = { \"transport.kind\" = \"irn\" }\n\
                    [[compare]]\nname = \"roce\"\nset = { transport = { kind = \"roce\" } }\n";
        let runs = |set: &[&str]| {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            parse(text, "t.toml", Path::new("."), &set).map(|s| s.runs)
        };
        let err = runs(&["transport.kind=irn"]).unwrap_err().to_string();
        assert!(
            err.contains(
                "variant `roce` sets transport.kind = \"roce\", and `transport.kind`, given for \
                 every variant (by --set, a sweep's grid or an experiment's point), makes it \
                 \"irn\": each variant would run that under its own name"
            ),
            "{err}"
        );
        let err = runs(&["transport={ kind = \"roce\" }"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("variant `irn` sets transport.kind = \"irn\", and `transport`"),
            "{err}"
        );
        // The roce variant's whole `transport` table gains the override's key.
        let both = runs(&["transport.mtu=4096"]).unwrap();
        assert!(both.iter().all(|r| r.resolved.transport.mtu == 4096));
        assert_eq!(both[1].resolved.transport.kind, TransportKind::Roce);
    }

    /// A number in an override's key names an entry of a list: `workload.job.1.size` changes
    /// the second job alone; an entry the list does not have, or a name for a number, is
    /// refused with the entries it has.
    #[test]
    fn an_override_changes_one_entry_of_a_list() {
        let text = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"collective\"\n\
                    [[workload.job]]\nop = \"all-reduce\"\nsize = \"64KB\"\nranks = 2\n\
                    [[workload.job]]\nop = \"all-gather\"\nsize = \"64KB\"\nranks = 2\n";
        let jobs = |set: &str| {
            let run = parse(text, "t.toml", Path::new("."), &[set.to_string()])?
                .runs
                .remove(0);
            Ok::<_, ScenarioError>(run.resolved.workload.job.unwrap_or_default())
        };
        let jobs_now = jobs("workload.job.1.size=\"128KB\"").unwrap();
        let sizes: Vec<_> = jobs_now.iter().map(|j| j.size.clone()).collect();
        assert_eq!(sizes, ["64KB", "128KB"].map(String::from));
        let cases = [
            ("workload.job.2.size=1MB", "--set workload.job.2.size: `job` has no entry 2: its entries are 2, `0` to `1` (an override changes an entry of a list, never adds one)"),
            ("workload.job.first.size=1MB", "--set workload.job.first.size: `job` is a list: name one of its entries by its index, as in `job.0`"),
            ("workload.job.0.size.x=1MB", "--set workload.job.0.size.x: `size` is not a table; write a size as a string with its unit, e.g. \"240KB\" (B, KB, MB, GB, KiB, MiB, GiB)"),
        ];
        for (set, want) in cases {
            let err = jobs(set).unwrap_err().to_string();
            assert!(err.ends_with(want), "{set}: {err}");
        }
    }

    /// Tiny flows at a high load offer the NICs many times what they send once headers count:
    /// refused, with the factor; the same load of 1 KB flows is not, nor of 1 KB draws that a
    /// verbs mix makes atomics.
    #[test]
    fn a_load_the_nics_cannot_send_with_headers_is_refused() {
        let workload = |size: &str| {
            format!(
                "[workload]\nload = 0.7\nduration = \"20us\"\nsizes = {{ fixed = \"{size}\" }}\n"
            )
        };
        let err = file_error(&workload("1B"));
        assert!(
            err.contains("workload.load = 0.7: with headers the flows' packets offer the NICs"),
            "{err}"
        );
        assert!(err.contains("flows of 1 B on average"), "{err}");
        assert!(parse(&workload("1KB"), "t.toml", Path::new("."), &[]).is_ok());
        // Atomics carry 8 B each but arrive at the rate of the 1 KB drawn for them: they offer
        // a tenth of the load, not eleven times it.
        let atomics = format!("{}verbs = {{ atomic = 1 }}\n", workload("1KB"));
        assert!(parse(&atomics, "t.toml", Path::new("."), &[]).is_ok());
    }

    /// The error an empty file with the overrides `o` gets.
    fn set_error(o: &[&str]) -> String {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        parse("", "t.toml", Path::new("."), &o)
            .unwrap_err()
            .to_string()
    }

    /// A comparison's base is the file without its variants, with the command line's keys; a
    /// plain scenario has none. A file without `name` is named after itself when loaded.
    #[test]
    fn a_comparison_keeps_its_base_and_a_nameless_file_takes_its_stem() {
        let text = "[topology]\nkind = \"star\"\nhosts = 4\n[[compare]]\nname = \"a\"\n\
                    set = { \"switch.pfc\" = true }\n[[compare]]\nname = \"b\"\n";
        let sc = parse(text, "t.toml", Path::new("."), &["seed=7".into()]).unwrap();
        let base = sc.base.expect("a base");
        assert!(!base.switch.pfc && base.seed == 7);
        assert_eq!(base.topology.kind, Some(TopologyKind::Star));
        assert!(parse("", "t.toml", Path::new("."), &[])
            .unwrap()
            .base
            .is_none());
        let path = Path::new("my_test.toml");
        assert_eq!(
            file_name_default(path, text).as_deref(),
            Some("name=\"my_test\"")
        );
        assert_eq!(file_name_default(path, "name = \"x\"\n"), None);
    }

    /// A file with one `[[compare]]` entry is a comparison of one variant, not a plain
    /// scenario; a name given twice is echoed quoted, as a string value.
    #[test]
    fn one_compare_entry_makes_a_comparison_and_a_repeated_name_is_quoted() {
        let star = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nduration = \"10us\"\n";
        let one = format!("{star}[[compare]]\nname = \"x\"\n");
        let sc = parse(&one, "t.toml", Path::new("."), &[]).unwrap();
        assert!(sc.compare && sc.runs.len() == 1 && sc.runs[0].name == "x");
        assert!(!parse(star, "t.toml", Path::new("."), &[]).unwrap().compare);
        let twice = format!("{one}[[compare]]\nname = \"x\"\n");
        assert_eq!(
            file_error(&twice),
            "t.toml: compare.name = \"x\": variant names must be unique"
        );
    }

    #[test]
    fn set_renames_the_scenario_but_cannot_change_its_variants() {
        let set = |o: &[&str]| {
            let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
            parse("name = \"a\"\n", "t.toml", Path::new("."), &o)
        };
        let sc = set(&["workload.duration=\"20us\"", "name=\"b\""]).unwrap();
        assert_eq!(sc.name, "b");
        assert_eq!(sc.runs[0].name, "b");
        for key in ["compare=[]", "compare.name=\"x\""] {
            let err = set(&[key]).unwrap_err().to_string();
            assert!(err.contains("an override cannot change"), "{key}: {err}");
        }
        let err = set(&["name=5"]).unwrap_err().to_string();
        assert!(
            err.contains("--set name: expected a string, got 5"),
            "{err}"
        );
    }

    /// A key the merged scenario rejects is blamed on the `--set` that wrote it (not on the
    /// variant it was merged into), and a flow-size distribution written key by key is answered
    /// with the form `sizes` takes.
    #[test]
    fn a_bad_set_is_named_and_the_sizes_form_explained() {
        let set = |text: &str, o: &str| {
            let o = ["workload.duration=\"20us\"".to_string(), o.to_string()];
            parse(text, "t.toml", Path::new("."), &o)
                .unwrap_err()
                .to_string()
        };
        let compare = "[[compare]]\nname = \"IRN\"\n";
        let err = set(compare, "foo=1");
        assert!(
            err.starts_with("t.toml: --set foo: unknown field `foo`, expected one of `name`"),
            "{err}"
        );
        let err = set("", "workload.foo=1");
        assert!(
            err.starts_with("t.toml: --set workload.foo: unknown field `foo`"),
            "{err}"
        );
        let form = "write a distribution whole: --set 'workload.sizes={ fixed = \"1MB\" }'";
        for (text, o) in [
            (
                "[workload]\nsizes = \"irn-default\"\n",
                "workload.sizes.fixed=1MB",
            ),
            (
                "[workload]\nsizes = { cdf = \"x.txt\" }\n",
                "workload.sizes.fixed=1MB",
            ),
            ("", "workload.sizes=fixed"),
        ] {
            let err = set(text, o);
            let key = o.split('=').next().unwrap();
            assert!(
                err.starts_with(&format!("t.toml: --set {key}: ")),
                "{o}: {err}"
            );
            assert!(err.contains(form), "{o}: {err}");
        }
        // A variant's own bad key is still the variant's.
        let err = set("[[compare]]\nname = \"a\"\nset = { foo = 1 }\n", "seed=2");
        assert!(
            err.starts_with("t.toml: variant `a`: foo: unknown field `foo`"),
            "{err}"
        );
    }

    /// A value of the wrong type or beyond TOML's integers is answered with its range or an
    /// example of the form, in the file and from `--set` alike.
    #[test]
    fn type_errors_give_the_range_or_the_form() {
        let file = file_error;
        let set = |o: &str| set_error(&[o]);
        let cases = [
            (
                file("seed = 18446744073709551615\n"),
                "seed: out of range: an integer in a scenario lies between -9223372036854775808 \
                 and 9223372036854775807",
            ),
            (
                file("[topology]\nk = 99999999999999999999\n"),
                "topology.k: out of range: an integer in a scenario lies between",
            ),
            (
                set("topology.hosts=8\nseed=3"),
                "the value holds a line break and a second key: give one key=value per --set",
            ),
            (
                set("seed=18446744073709551615"),
                "--set seed=18446744073709551615: 18446744073709551615 is out of range: an \
                 integer lies between",
            ),
            (
                file("seed = -1\n"),
                "invalid value: integer `-1`, expected a whole number from 0 to \
                 9223372036854775807",
            ),
            (
                set("transport.mtu=99999999999"),
                "--set transport.mtu: invalid value: integer `99999999999`, expected a whole \
                 number from 0 to 4294967295",
            ),
            (
                file("[topology]\nlink_rate = 100\n"),
                "invalid type: integer `100`, expected a string; write a rate as a string with \
                 its unit, e.g. \"100Gbps\"",
            ),
            (
                set("topology.link_rate=100"),
                "--set topology.link_rate: invalid type: integer `100`, expected a string; write \
                 a rate as a string with its unit, e.g. \"100Gbps\"",
            ),
            (
                file("[workload]\nduration = 1e308\n"),
                "invalid type: floating point `1e308`, expected a string; write a duration as a \
                 string with its unit, e.g. \"10us\"",
            ),
            (
                file("[switch]\nbuffer = 5\n"),
                "expected a string; write a size as a string with its unit, e.g. \"240KB\"",
            ),
            (
                file("[topology]\nlink_rate = \"999999Tbps\"\n"),
                "t.toml: topology.link_rate = \"999999Tbps\": between 1Mbps and 10Tbps",
            ),
        ];
        for (err, want) in cases {
            assert!(err.contains(want), "{err}\nwanted: {want}");
        }
        // A lossy link's `rate` is a probability, not a link rate.
        let err = file("[topology]\nlossy_link = [{ nodes = [0, 1], rate = \"1%\" }]\n");
        assert!(
            err.ends_with("invalid type: string \"1%\", expected a number"),
            "{err}"
        );
    }

    /// A misspelt key or name, in the file or from `--set`, keeps serde's list of what is
    /// allowed and adds the name meant when one is a few edits away; a name far from every
    /// allowed one gets no guess.
    #[test]
    fn a_misspelt_name_is_answered_with_the_name_meant() {
        let file = file_error;
        let set = set_error;
        let cases = [
            (
                set(&["workload.laod=0.5"]),
                "--set workload.laod: unknown field `laod`, expected one of `kind`, `load`",
                "; did you mean `load`?",
            ),
            (
                file("[workload]\nlaod = 0.5\n"),
                "unknown field `laod`, expected one of `kind`, `load`",
                "; did you mean `load`?",
            ),
            (
                set(&["load_balancing.kind=drll"]),
                "--set load_balancing.kind: unknown variant `drll`, expected one of `ecmp`",
                "; did you mean `drill`?",
            ),
            (
                file("[load_balancing]\nkind = \"drll\"\n"),
                "unknown variant `drll`, expected one of `ecmp`",
                "; did you mean `drill`?",
            ),
            (
                set(&["topologyy.kind=star"]),
                "unknown field `topologyy`, expected one of `name`",
                "; did you mean `topology`?",
            ),
            (
                set(&["transport.cc=dcqcn", "transport.dcqcn.cnp_intreval=1"]),
                "transport.dcqcn.cnp_intreval is set: unknown parameter; allowed: cnp_interval",
                "; did you mean `cnp_interval`?",
            ),
            // A variant written like the scenario: its keys go in `set`.
            (
                file("[[compare]]\nname = \"a\"\ntransport.kind = \"roce\"\n"),
                "unknown field `transport`, expected one of `name`, `set`, `points`",
                "; a variant changes the scenario's keys through its `set`: \
                 set = { \"transport.KEY\" = VALUE }",
            ),
            // ns-3's names: what irn has instead, not the nearest spelling.
            (
                set(&["transport.ack_interval=1"]),
                "unknown field `ack_interval`",
                "; irn's receivers acknowledge every data packet (ns-3's L2_ACK_INTERVAL 1); \
                 there is no key for it",
            ),
            (
                set(&["transport.kind=\"go-back-n\""]),
                "unknown variant `go-back-n`",
                "; RoCE's go-back-N is transport.kind = \"roce\"; IRN's transport with \
                 go-back-N in place of selective repeat is \"irn-go-back-n\"",
            ),
            (
                file("[workload]\nfile = \"flows.txt\"\n"),
                "workload.file is set: does not apply to workload.kind = \"poisson\"",
                "read with kind = \"ns3\" (an ns-3 flow file), \"trace\" (a CSV of flows) or \
                 \"dag\" (flows that wait for each other)",
            ),
        ];
        for (err, serde, hint) in cases {
            assert!(err.contains(serde), "{err}\nwanted: {serde}");
            assert!(err.ends_with(hint), "{err}\nwanted it to end: {hint}");
        }
        for err in [set(&["workload.xyzw=1"]), set(&["ordering.kind=drll"])] {
            assert!(err.contains("expected one of"), "{err}");
            assert!(!err.contains("did you mean"), "{err}");
        }
    }

    /// An enum key given a number, a boolean or a list is answered with the names it takes
    /// and the value given, not serde's "wanted string or table".
    #[test]
    fn an_enum_given_a_non_string_lists_its_names() {
        let file = file_error;
        let set = |o: &str| set_error(&[o]);
        let ordering = "expected one of \"none\", \"ideal\", \"static-bitmap\", \"eunomia\"";
        let cases = [
            (
                set("ordering.kind=0"),
                format!("t.toml: --set ordering.kind: {ordering}; got 0"),
            ),
            (file("[ordering]\nkind = 0\n"), format!("{ordering}; got 0")),
            (
                set("transport.kind=true"),
                "--set transport.kind: expected one of \"irn\", \"roce\", \"irn-go-back-n\", \
                 \"irn-without-bdp-fc\", \"irn-without-sack\", \"tcp\", \"mp-rdma\"; got true"
                    .into(),
            ),
            (
                set("load_balancing.reorder_buffer=[1]"),
                "expected one of \"switch\", \"outside\"; got [1]".into(),
            ),
            (
                file("[[pause_control]]\nrule = 1.5\n"),
                "expected one of \"none\", \"threshold\", \"on-off\", \"time-based\"; got 1.5"
                    .into(),
            ),
        ];
        for (err, want) in cases {
            assert!(err.contains(&want), "{err}\nwanted: {want}");
            assert!(!err.contains("wanted string"), "{err}");
        }
    }

    /// A value of a key that takes one of two forms (a number or a word, a selector or a
    /// list, a size or a number of pauses, a size or "auto") is answered with both, and a
    /// list's items with the list's form.
    #[test]
    fn a_key_of_two_forms_gives_both() {
        let set = set_error;
        let cases = [
            (
                set(&["ordering.kind=eunomia", "ordering.cap=true"]),
                "write a number of bits, e.g. 256 (a multiple of block_bits), or \"none\"",
            ),
            (
                set(&["monitor.ports=3"]),
                "write a port selector, e.g. \"switch\"",
            ),
            (
                set(&["pause_control=[{ rule = \"threshold\", threshold = true }]"]),
                "write a size, e.g. \"100KB\", or a number of longest pauses' worth of data",
            ),
            (
                set(&["transport.kind=roce", "transport.tx_window=true"]),
                "write a packet count, e.g. 64, or \"auto\" (the BDP cap) or \"off\"",
            ),
            (
                set(&["switch.pfc_threshold=5"]),
                "expected a string; write a size as a string with its unit, e.g. \"240KB\" (B, \
                 KB, MB, GB, KiB, MiB, GiB), or \"auto\"",
            ),
            (
                set(&["transport.nack_interval=4"]),
                "e.g. \"10us\" (ps, ns, us, ms, s), or \"off\"",
            ),
            (
                set(&["run.fct_size_buckets=[10]"]),
                "run.fct_size_buckets[0]: invalid type: integer `10`, expected a string; write a \
                 size as a string with its unit, e.g. \"240KB\"",
            ),
        ];
        for (err, want) in cases {
            assert!(err.contains(want), "{err}\nwanted: {want}");
        }
    }

    #[test]
    fn an_error_of_one_variants_making_names_the_variant() {
        let text = "[[compare]]\nname = \"irn\"\n[[compare]]\nname = \"roce\"\n\
                    set = { \"transport.kind\" = \"roce\" }\n";
        let set = |o: &str| {
            let o = ["workload.duration=\"20us\"".to_string(), o.to_string()];
            parse(text, "t.toml", Path::new("."), &o)
                .unwrap_err()
                .to_string()
        };
        let err = set("transport.bdp_cap=5");
        assert!(
            err.starts_with("t.toml: variant `roce`: transport.bdp_cap = 5: BDP-FC is not part"),
            "{err}"
        );
        let err = set("workload.load=2");
        assert!(err.starts_with("t.toml: workload.load = 2: "), "{err}");
    }
}
