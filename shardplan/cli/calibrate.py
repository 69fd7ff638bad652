"""``shardplan calibrate``: fit a cluster's constants to its measured run records."""

import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
import yaml
from rich.markup import escape
from rich.table import Table

from shardplan.cli.common import (POOR_FIT_SOURCE, UNCHECKED_SOURCE, app, check_output_path, config_errors, console,
                                  err_console, shipped_cluster)
from shardplan.cli.record import MapOpt, SetOpt
from shardplan.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from shardplan.specs.framework import FrameworkProfile

RecordsArg = Annotated[Path, typer.Argument(help="run records, JSON Lines (docs/calibration.md), or a CSV of runs "
                                             "read with --map / --set as `shardplan record import` does")]
YamlOut = Annotated[Optional[Path], typer.Option("--output", "-o", help="write the cluster YAML here")]
ProfileOut = Annotated[Optional[Path], typer.Option("--profile-out", help="write the fitted framework fields "
                                                    "here (use as --framework FILE)")]
NoCvOpt = Annotated[bool, typer.Option("--no-cross-validation", help="skip the leave-one-group-out fits")]
ForceOpt = Annotated[bool, typer.Option("--force", help="write -o / --profile-out even when the fit is poor (fewer "
                                        "measurements than fitted parameters, records measured on another device "
                                        "class, or a median in-sample error over 50%); the exit code stays 1")]
ParamsOpt = Annotated[Optional[list[str]], typer.Option(
    "--params", help="fit only these constants (repeat it, or comma-separate), the others held at the base's values: "
    "matmul_efficiency, hbm_efficiency, scale_up_efficiency, scale_out_efficiency, scale_out_latency, "
    "microbatch_overhead_s, fp8_matmul_efficiency, fp4_matmul_efficiency, moe_expert_overhead_s, allocator_overhead, "
    "context_bytes, lm_head_stage_bytes (default: the first six, the records' GEMM rates, the MoE one for MoE records, "
    "the memory ones for records with peaks)")]
#: --framework of calibrate: the profile the records ran under (calibrate has no export target)
CalibrateFrameworkOpt = Annotated[Optional[str], typer.Option(
    "--framework", help="the framework profile the records ran under (a built-in name or a profile file, with "
    "optional +field=value overrides); default: the --hardware file's framework section, else the one every record "
    "names (train --record writes jax-runtime), else megatron on GPUs and maxtext on TPUs")]
#: a fit whose median |error| on the records it was fitted to stays above this is not a calibration (exit code 1)
MAX_IN_SAMPLE_ERROR = 0.5
#: a fit that calls fewer of its records' outcomes (ran / out of memory) right than this is not a calibration either:
#: a coin calls half (a breaker's 10 records, 8 of which ran but were predicted not to fit, were written with exit 0)
MIN_FIT_OOM_ACCURACY = 0.5
#: a base preset this far off (median |error|) on records that name other hardware prices another device class
MAX_BASE_ERROR_OTHER_HARDWARE = 3.0


#: --hardware of calibrate: the base fitted (default: the preset every record names, else h100-sxm; None tells a
#: default from a choice)
CalibrateHardwareOpt = Annotated[Optional[str], typer.Option(
    "--hardware", "-H", callback=shipped_cluster, help="the base to fit: a preset name, YAML/JSON spec file or a "
    "cluster file shardplan ships (default: the preset every record names, else h100-sxm)")]


@app.command()
@config_errors
def calibrate(records: RecordsArg, hardware: CalibrateHardwareOpt = None, framework: CalibrateFrameworkOpt = None,
              output: YamlOut = None, profile_out: ProfileOut = None, no_cross_validation: NoCvOpt = False,
              map: MapOpt = None, set: SetOpt = None, force: ForceOpt = False, params: ParamsOpt = None) -> None:
    """Fit the hardware's efficiencies and network constants (and the framework's overheads) to
    measured runs; print fitted vs base values and in-sample / cross-validated errors. A .csv file
    is imported first with --map / --set (docs/calibration.md)."""
    from shardplan.calibrate import calibrate as fit_records, cluster_yaml, profile_yaml
    from shardplan.inputs import hardware_spec

    hardware_given = hardware is not None
    check_output_path("-o/--output", output, inputs={"records": records})  # before the fit, which can take minutes
    check_output_path("--profile-out", profile_out, inputs={"records": records})
    if output is not None and profile_out is not None and output.resolve() == profile_out.resolve():
        raise ConfigError(f"-o/--output and --profile-out are the same file ({output}): the profile would overwrite the "
                          "cluster file; legal: two different paths", field="profile_out", value=str(profile_out))
    from shardplan.calibrate import params_named
    chosen = params_named(params) if params is not None else None  # bad input before reading the records
    recs = _read_runs(records, map, set)
    hardware = hardware or _records_hardware(recs)
    hw = hardware_spec(hardware)
    prof = _fit_profile(recs, hardware, framework)
    _framework_notes(recs, prof)
    other = _hardware_warning(recs, hardware, hw, hardware_given)
    from shardplan.cli.common import progress_bar
    _announce(len(recs), no_cross_validation)
    with progress_bar("calibrate (fits)") as update:  # one step per fit: all records, then each fold
        cal = fit_records(recs, hw, prof, params=chosen, cross_validate=not no_cross_validation, progress=update)
    t = fitted_table(cal, f"calibration of {hw.name} / {prof.name} on {len(recs)} records", hw, prof)
    console.print(t)
    print_records(cal)
    print_fit_summary(cal, not no_cross_validation, hw)
    from shardplan.calibrate import base_error_of
    other_error = base_error_of([r for r in recs if r.hardware in other], hw, prof) if other else None
    poor = poor_fit(cal, other, other_error, other_class(other, hw, Path(records).parent))
    if poor:
        err_console.print(f"[red]poor fit:[/] {escape(poor)}; " + ("written anyway (--force)" if force else
                          "nothing written (--force writes the files)"), highlight=False, soft_wrap=True)
        if not force:
            raise typer.Exit(1)
    date = datetime.date.today().isoformat()
    if output:
        doc = cluster_yaml(cal, hw, len(recs), date, prof, source=hardware)
        # a base file's own mark is not this fit's (a good re-calibration of a --force file carried it on)
        sources = {k: v for k, v in (doc.get("sources") or {}).items()
                   if str(k).lower() not in (POOR_FIT_SOURCE, UNCHECKED_SOURCE)}
        if poor:  # --force: the file says so, and every command reading it repeats it (common.hardware_file_notes)
            sources[POOR_FIT_SOURCE] = poor
        if no_cross_validation:  # the held-out check (which can make a fit poor) did not run: said, and repeated
            sources[UNCHECKED_SOURCE] = (f"calibrate --no-cross-validation on {date}: the fitted constants were not "
                                         "scored on held-out records (leave-one-model-out / node-count-out)")
        doc["sources"] = sources
        output.write_text(yaml.safe_dump(doc, sort_keys=False))
        console.print(f"wrote {output} (use it as --hardware {output})")
    if profile_out:
        profile_out.write_text(yaml.safe_dump(profile_yaml(cal, prof), sort_keys=False))
        console.print(f"wrote {profile_out} (use it as --framework {profile_out})")
    if poor:
        raise typer.Exit(1)


def _records_hardware(recs: list) -> str:
    """``--hardware`` when it is not given: the preset (or shipped cluster) every record names, with a note, else
    h100-sxm (new-user pass 54b: MI300X records were priced on the H100 default and refused for its HBM)."""
    from shardplan.presets.hardware import hardware_preset_name
    names = {r.hardware for r in recs}
    if len(names) == 1:
        name = next(iter(names))
        preset = hardware_preset_name(name) or (name if _loadable(name) is not None and "/" not in name else None)
        if preset is not None:
            err_console.print(f"[yellow]note:[/] every record names hardware {escape(name)}: the fit prices them on "
                              f"{escape(preset)} (--hardware chooses another base)", highlight=False)
            return shipped_cluster(preset) or preset
    return "h100-sxm"


def _framework_notes(recs: list, prof) -> None:
    """On stderr: the frameworks the records name that the fit's profile is not (it prices them all), and
    :func:`_precision_note`."""
    named = sorted({r.framework for r in recs if r.framework and r.framework.split("/")[-1].lower() != prof.name.lower()
                    and r.framework.split("/")[-1].lower() not in prof.origin.lower()})
    if named:
        err_console.print(f"[yellow]warning:[/] the records name framework {', '.join(escape(n) for n in named)}; the fit "
                          f"uses the {escape(prof.label)} profile for all of them (choose it with --framework)",
                          highlight=False)
    _precision_note(recs, prof)


def _precision_note(recs: list, prof) -> None:
    """A note when records give no precision under a Megatron-LM profile without a default: they are priced as
    bf16-mixed (bf16 gradients, what shardplan's Megatron export writes with --grad-reduce-in-bf16), while Megatron-LM's
    --bf16 alone keeps fp32 gradients; a fit on the wrong one absorbs the gradient buffer into allocator terms
    (new-user pass 54b: allocator_overhead 0.025 -> 0.133 and an invented LM-head term on MI300X records)."""
    missing = sum(r.precision is None for r in recs)
    if not missing or prof.default_precision is not None or not prof.name.startswith("megatron"):
        return
    err_console.print(f"[yellow]note:[/] {missing} of {len(recs)} records give no precision: priced as bf16-mixed (bf16 "
                      "gradients, Megatron-LM's --grad-reduce-in-bf16); stock --bf16 keeps fp32 gradients (2 more bytes "
                      "per parameter): if the runs did, give the records precision bf16-mixed-fp32-grads (record import "
                      "--set precision=bf16-mixed-fp32-grads)", highlight=False, soft_wrap=True)


def _read_runs(records: Path, map: list[str] | None, set: list[str] | None) -> list:
    """The run records of ``records``: a .csv file imported with --map / --set (naming its unread columns), else a
    JSON Lines file read as it is.

    Raises:
        ConfigError: --map / --set with a file that is not a .csv; an unreadable file or record.
    """
    if records.suffix.lower() == ".csv":
        from shardplan.cli.record import unread_note
        from shardplan.record_import import import_csv, parse_map_items
        mapping = parse_map_items(list(map or []), list(set or []))
        recs = import_csv(records, mapping)
        unread_note(records, mapping)
        return recs
    if map or set:
        raise ConfigError(f"--map / --set read a CSV of runs, but {records} is not a .csv file (run records are "
                          "read as they are); legal: drop --map / --set, or give the .csv file",
                          field="map", value=list(map or []) + list(set or []))
    from shardplan.records import read_records
    return read_records(records)


def _fit_profile(recs: list, hardware: str, framework: str | None) -> "FrameworkProfile":
    """The profile the fit uses, with a note saying where it came from: --framework, else the hardware file's, else
    the one every record names (:func:`records_framework`), else the hardware's default (maxtext on TPUs, megatron).

    Raises:
        ConfigError: an unknown --framework or an unreadable profile file.
    """
    from shardplan.cli.common import framework_note
    from shardplan.inputs import default_framework
    from shardplan.loaders import hardware_framework
    from shardplan.presets.frameworks import framework_profile
    agreed = records_framework(recs) if framework is None and hardware_framework(hardware) is None else None
    if agreed is not None:
        # every record names one built-in profile (train --record writes jax-runtime): fit as that program ran
        err_console.print(f"[yellow]note:[/] framework profile {escape(repr(agreed.name))}, the one every record names "
                          "(--framework chooses another)", highlight=False, soft_wrap=True)
        return agreed
    prof = framework_profile(framework) if framework is not None else (default_framework(hardware)
                                                                        or framework_profile("megatron"))
    framework_note(hardware, framework, prof)
    return prof


def records_framework(recs) -> "FrameworkProfile | None":
    """The built-in profile every record names (a record's ``framework``, case-insensitive), or None where they name
    several, a profile file or an unknown name: calibrate's profile when --framework is not given and the hardware
    file names none (before, a set of ``train --record`` records was fitted with the megatron default)."""
    from shardplan.presets.frameworks import FRAMEWORKS
    names = {r.framework.strip().lower() for r in recs if r.framework}
    if len(names) != 1 or any(r.framework is None for r in recs):  # a record naming none takes calibrate's choice
        return None
    return FRAMEWORKS.get(names.pop())


def _announce(n_records: int, no_cross_validation: bool) -> None:
    """Say on stderr, before the fits (a progress bar shows nothing where stderr is not a terminal), what calibrate
    is about to do and how long a fit takes."""
    # the shared grid's 1,641 records take about a minute per fit on 2 cores (docs/calibration.md): time grows with
    # the records; a few records fit in seconds (a new user saw the minute quoted for 17)
    per_fit = "about a minute" if n_records > 800 else "seconds to tens of seconds"
    folds = ("" if no_cross_validation
             else " and one per held-out model and per held-out node count where the records hold two or more")
    err_console.print(f"calibrate: {n_records:,} records; first which parameters they identify, then the fit on all of "
                      f"them{folds} ({per_fit} per fit on 2 cores; a parameter the fit puts on a bound costs one more)",
                      highlight=False, soft_wrap=True)


def other_class(names: list[str], hw, base_dir: Path | None = None) -> list[str]:
    """The hardware names among ``names`` that are presets (or aliases) of another device class than ``hw``: another
    ``kind`` or ``compute_arch`` (an A100 or a TPU v5p against an H100 base), or for TPUs, whose presets share the
    'tpu' architecture, another generation (another bf16 peak: v5e records against a v6e base, breaker pass 53d).
    A name that is a shipped cluster or a hardware file (``aws-p4de``, ``../a100.yaml``, beside the records in
    ``base_dir`` or in the working folder: :func:`_loadable`) is judged by the hardware it loads (breaker pass 54: A100
    clusters were folded into an H100 fit); names nothing loads (a CPU, a cluster's own label) are not judged here."""
    from shardplan.presets.hardware import HARDWARE, hardware_preset_name

    def device_class(h) -> tuple:
        return h.kind, h.compute_arch, h.peak_flops_bf16 if h.kind == "tpu" else None
    out = []
    for name in names:
        preset = HARDWARE.get(hardware_preset_name(name) or "") or _loadable(name, base_dir)
        if preset is not None and device_class(preset) != device_class(hw):
            arch = preset.compute_arch or preset.kind
            same = (preset.kind, preset.compute_arch) == (hw.kind, hw.compute_arch)
            out.append(f"{name} ({f'another {arch} generation' if same else arch})")
    return out


def _loadable(name: str, base_dir: Path | None = None):
    """The hardware ``name`` loads (breaker passes 54 / 54b): a hardware file beside the records (``base_dir``), else
    one relative to the working folder, else a cluster shardplan ships under that name (whatever folders the working
    folder holds: an ``aws-p4de/`` folder of that cluster's records is no hardware file); None when it loads nothing
    (a label of the records' own) or cannot be read."""
    from shardplan.calibration import CLUSTERS_DIR
    from shardplan.errors import ConfigError
    from shardplan.loaders import load_hardware
    shipped = CLUSTERS_DIR / f"{name}.yaml"
    candidates = [base_dir / name if base_dir is not None else None, Path(name),
                  shipped if "/" not in name else None]
    for path in candidates:
        if path is None or not path.is_file():
            continue
        try:
            return load_hardware(str(path))
        except (ConfigError, OSError, ValueError):
            return None
    return None


#: a fit whose median throughput |error| exceeds the base hardware's on the same records (in sample, or on the groups
#: cross-validation held out) by more than these (2 points and 20%: the fit minimises a soft-L1 loss, not the median,
#: so a small excess is no failure) is no calibration
WORSE_THAN_BASE_POINTS = 0.02
WORSE_THAN_BASE_FACTOR = 1.2


def worse_than_base(cal) -> str | None:
    """Why a fit predicts worse than the uncalibrated base hardware, or None: its in-sample median throughput |error|,
    or its held-out one (each cross-validation split against the base's error on the same held-out groups), exceeds
    the base's by :data:`WORSE_THAN_BASE_POINTS` and by the factor :data:`WORSE_THAN_BASE_FACTOR`. A new user's three
    TPU v6e records fitted hbm_efficiency 0.24 at 6.9% in sample against the preset's 6.1%, and 19.4% on the model
    each fold held out: a file that makes every later plan worse. Also one held-out group predicted much worse than by
    the base (:func:`worse_group`)."""
    def worse(fitted, base) -> bool:
        return (fitted is not None and base is not None and fitted > base + WORSE_THAN_BASE_POINTS
                and fitted > WORSE_THAN_BASE_FACTOR * base)
    fitted, base = cal.in_sample.get("throughput_median"), cal.base_error.get("throughput_median")
    if worse(fitted, base):
        return (f"the fitted constants leave a median throughput |error| of {fitted:.1%} on the records they were "
                f"fitted to, worse than the base hardware's {base:.1%} on the same records: the fit trades its "
                "parameters against each other on too few or too alike records; keep the base, or add runs that differ")
    for name, e in cal.cross_validated.items():
        held, base_held = e["throughput_median_of_groups"], e.get("base_median_of_groups")
        if worse(held, base_held):
            return (f"{name}: the constants fitted without a group predict it with a median throughput |error| of "
                    f"{held:.1%}, worse than the base hardware's {base_held:.1%} on the same groups: the fit does "
                    "not carry to runs it did not see (too few or too alike records); keep the base, or add runs "
                    "that differ")
    return worse_group(cal, worse)


#: a held-out group the fit predicts this much worse than the base (points and factor) fails the fit on its own,
#: whatever the median over the groups (new-user pass 58: cross-node runs 50% slow halved matmul_efficiency, and the
#: one-node runs, held out, went from the base's 16.9% to 40.4% while the median over the groups improved)
WORSE_GROUP_POINTS = 0.10
WORSE_GROUP_FACTOR = 1.5


def worse_group(cal, worse) -> str | None:
    """Why one held-out group is predicted much worse than by the base (:data:`WORSE_GROUP_POINTS` and
    :data:`WORSE_GROUP_FACTOR` beyond it), or None; ``worse`` is :func:`worse_than_base`'s rule."""
    for name, what, fitted, base in getattr(cal, "group_errors", ()):
        if worse(fitted, base) and fitted > base + WORSE_GROUP_POINTS and fitted > WORSE_GROUP_FACTOR * base:
            return (f"{name}: the constants fitted without the {what} records predict them with a median throughput "
                    f"|error| of {fitted:.1%}, worse than the base hardware's {base:.1%}: the other records' fit does "
                    "not carry to them, so their difference is not the hardware the fitted parameters describe (e.g. "
                    "runs across nodes slower than any network efficiency explains, absorbed into the GEMM rate); "
                    "calibrate on the records alike to the runs you will plan, or find what slows the others")
    return None


def poor_fit(cal, other_hardware: list[str], other_error: float | None = None,
             other_classes: list[str] | None = None) -> str | None:
    """Why a fit is no calibration, or None: fewer measurements than fitted parameters (underdetermined); the fitted
    constants call fewer than :data:`MIN_FIT_OOM_ACCURACY` of the records' ran / out-of-memory outcomes right or
    leave a median throughput |error| over :data:`MAX_IN_SAMPLE_ERROR` on the records they were fitted to (the
    records disagree with each other or with the cost model); or the base preset is off by over
    :data:`MAX_BASE_ERROR_OTHER_HARDWARE` (300%) on records that name other hardware (``other_hardware``: measured
    on another device class, e.g. ``train --record`` on CPU against the h100-sxm default), judged on those records
    alone (``other_error``, :func:`shardplan.calibrate.base_error_of`) where given, else on all: three CPU records
    among six H100 ones are 10,000% off while the median of the nine is 8%, and their step times would set the
    fitted per-microbatch cost every later prediction pays. And, whatever the errors, records naming a preset of
    another device class (``other_classes``, :func:`other_class`: an A100 or TPU record against an H100 base), whose
    rates a fit would fold into this hardware's constants. Also a fit that predicts worse than the base hardware
    (:func:`worse_than_base`)."""
    fitted, base = cal.in_sample.get("throughput_median"), cal.base_error.get("throughput_median")
    if other_hardware and other_error is not None:
        base = other_error
    if cal.underdetermined:  # a 0.0% in-sample error from fewer measurements than parameters
        return (f"{cal.underdetermined}; a file written from it would carry constants the records do not determine "
                "(and an in-sample error that says nothing)")
    fit_oom = cal.in_sample.get("fit_oom_accuracy")
    if fit_oom is not None and fit_oom < MIN_FIT_OOM_ACCURACY:
        return (f"the fitted constants call {fit_oom:.0%} of the records' outcomes right (ran / out of memory; under "
                f"{MIN_FIT_OOM_ACCURACY:.0%}): most records that ran are predicted not to fit, or the reverse (check "
                "their peaks, devices and layouts, and the hardware's HBM)")
    if fitted is not None and fitted > MAX_IN_SAMPLE_ERROR:
        return (f"the fitted constants leave a median throughput |error| of {fitted:.0%} on the records they were "
                f"fitted to (over {MAX_IN_SAMPLE_ERROR:.0%}): the records disagree with each other or with the cost "
                "model (check their step times, devices and layouts)")
    worse = worse_than_base(cal)
    if worse:
        return worse
    if other_classes:  # whatever the error: their rates would be absorbed into this device's constants
        return (f"records name hardware of another device class, {', '.join(other_classes)}: the fit would fold their "
                "rates into this hardware's constants; calibrate each class against a hardware file of its own (base: "
                "that preset) with --hardware")
    if base is not None and base > MAX_BASE_ERROR_OTHER_HARDWARE and other_hardware:
        return (f"the base hardware is off by {base:.0%} (median) on the records that name hardware "
                f"{', '.join(map(repr, other_hardware))}: they were measured on another device class; calibrate "
                "against a hardware file of that class (base: a preset like it) with --hardware"
                + ("; no preset describes a CPU: a `train --record` round trip on CPU is a smoke test of the loop"
                   if any(h.lower() == "cpu" for h in other_hardware) else ""))
    return None


#: why a parameter the records do not move is held (shardplan.calibrate.identifiable): moving it over a quarter of
#: its range changes no residual
HELD_WHY = {
    "scale_out_efficiency": "no collective of these runs is priced with the analytic network bandwidth (every run "
                            "inside one node, or the hardware's measured_busbw table gives the bandwidth)",
    "scale_out_latency": "no collective of these runs crosses nodes with a latency that shows (every run inside one "
                         "node, or messages large enough that bandwidth dominates)",
    "context_bytes": "the measured peaks are the allocator's, which the runtime context lies outside of, and no "
                     "record's fit/OOM outcome turns on it",
    "moe_expert_overhead_s": "no MoE layer among the records' layouts has its cost change with it",
    "": "moving it over a quarter of its range changes no prediction of these records",
}


def fitted_table(cal, title: str, hw=None, profile=None) -> Table:
    """The fitted parameters beside the base ones: unit, base, fitted and a note (held, on a bound, or the
    bounds). With ``hw`` / ``profile`` a base value outside the parameter's bounds is shown as given and as the fit
    starts it (clipped: a smoke bench file's matmul_efficiency 0.0135 starts at 0.2)."""
    t = Table(title=title)
    for col in ("parameter", "unit", "base", "fitted", "note"):
        t.add_column(col)
    for p, b, v in zip(cal.params, cal.base_values, cal.values):
        given = p.given(hw, profile) if hw is not None else None
        shown = f"{given:.4g} -> {b:.4g} (clipped into the bounds)" if given is not None and given != b else f"{b:.4g}"
        side = p.at_bound(v)
        if p.field in cal.at_bound:
            bound = p.lower if cal.at_bound[p.field] == "lower" else p.upper
            kept = given if given is not None and given != b else v  # a clipped base: the file keeps its own value
            note = (f"[yellow]held at the base {kept:.4g}[/]: the fit put it on its {cal.at_bound[p.field]} bound "
                    f"{bound:.3g}, so the records do not pin it; the others were fitted again without it")
            v = kept  # the value the file keeps (a new user read "fitted 0.2" beside "held at 0.01")
        elif p.field in cal.held:
            note = ("held: the records do not move it" if given is None or given == b
                    else f"held: the records do not move it; the file keeps {given:.4g}")
            v = given if given is not None else v
        elif side == "lower" and p.lower == 0 and v == 0:  # an additive cost of 0: a physical answer, not a limit
            note = "0: the records show no such cost"
        elif side == "lower" and p.lower == 0:  # near 0 but not 0: written as fitted, so say what is written
            note = f"{v:.4g}, near 0: the records show little such cost"
        elif side:
            note = (f"[yellow]at its {side} bound[/] {p.lower if side == 'lower' else p.upper:.3g}: the best fit "
                    "lies at or past it, so the records do not pin it")
        else:
            note = f"bounds [{p.lower:.3g}, {p.upper:.3g}]"
        t.add_row(f"{p.target}.{p.field}", p.unit, shown, f"{v:.4g}", note)
    return t


def error_text(e: dict) -> str:
    """One line of :func:`shardplan.calibrate.errors`' figures in words: "throughput median |error| 9.5% over 12
    runs, peak memory median |error| 12.5%, fit/OOM 88.2%"."""
    parts = [f"throughput median |error| {e['throughput_median']:.1%} over {e.get('runs', 0):.0f} runs"]
    if "memory_median" in e:
        parts.append(f"peak memory median |error| {e['memory_median']:.1%}")
    if "fit_oom_accuracy" in e:
        parts.append(f"fit/OOM {e['fit_oom_accuracy']:.1%}")
    return ", ".join(parts)


def _print_left_out(cal) -> None:
    """The records the fit left out (stderr, five of each kind and a count): layouts the planner refuses
    (:attr:`~shardplan.calibrate.Calibration.excluded`) and runs on degraded hardware by their own bus-bandwidth
    measurement (:attr:`~shardplan.calibrate.Calibration.degraded`); then the records whose outcome the fitted
    constants call wrong (:attr:`~shardplan.calibrate.Calibration.misjudged`)."""
    for lines, level, head, more in (
            (cal.excluded, "warning", "left out of the fit, the planner refuses its layout: ",
             "more records that ran were left out the same way"),
            (cal.degraded, "warning", "left out of the fit, its own bus-bandwidth measurement shows degraded hardware: ",
             "more records that ran were left out the same way"),
            (cal.kept_low, "note", "", "more notes of the same kind"),
            (cal.outliers, "warning", "a record the fitted constants miss by more than 10x: ",
             "more records missed by more than 10x"),
            (cal.misjudged, "note", "the fitted constants call this record's outcome wrong: ",
             "more records called wrong")):
        _print_five(lines, level, head, more)


def _print_five(lines: list[str], level: str, head: str, more: str) -> None:
    """The first five of ``lines`` on stderr as ``level: head line``, then a count of the rest."""
    for line in lines[:5]:
        err_console.print(f"[yellow]{level}:[/] {escape(head)}{escape(line)}", highlight=False, soft_wrap=True)
    if len(lines) > 5:
        err_console.print(f"[yellow]{level}:[/] {len(lines) - 5} {more}", highlight=False)


#: records shown run by run (more: the worst of them by the fitted |error|, and a count)
RECORDS_SHOWN = 30


def print_records(cal) -> None:
    """Each record that ran (:attr:`~shardplan.calibrate.Calibration.per_record`, up to :data:`RECORDS_SHOWN`, else
    the worst by the fitted |error|): measured and predicted tokens/s per device with the base and the fitted
    constants, grouped by model and node count, measured fastest first; then, per group, the pairs of runs the
    fitted constants order against the measurements (what a plan ranks with: new-user pass 58 found the fitted file
    ordering two measured 70B layouts the other way round, from the medians alone invisible). Errors are
    predicted / measured - 1."""
    rows = sorted(cal.per_record, key=lambda r: (r[1], r[2], -r[4]))
    shown = rows
    if len(rows) > RECORDS_SHOWN:
        worst = sorted(rows, key=lambda r: -abs((r[6] or 0) / r[4] - 1))[:RECORDS_SHOWN // 2]
        shown = [r for r in rows if r in worst]
    t = Table(title=f"records that ran ({len(shown)} of {len(rows)}{', the worst by the fitted error' if shown != rows else ''}"
                    "; error = predicted / measured - 1)")
    for col in ("record", "model", "nodes", "layout", "measured tok/s/dev", "base", "fitted", "fitted error"):
        t.add_column(col, justify="right" if col not in ("record", "model", "layout") else "left")
    for where, model, nodes, layout, meas, base, fit in shown:
        t.add_row(escape(where), escape(model), str(nodes), escape(layout), f"{meas:,.0f}",
                  "-" if base is None else f"{base:,.0f}", "-" if fit is None else f"{fit:,.0f}",
                  "-" if fit is None else f"{fit / meas - 1:+.1%}")
    console.print(t)
    for line in misordered(rows):
        err_console.print(f"[yellow]note:[/] {escape(line)}", highlight=False, soft_wrap=True)


def misordered(rows: list[tuple]) -> list[str]:
    """Per (model, nodes) group of :func:`print_records`' rows: the pairs of runs whose fitted predictions order
    them against the measurements (pairs measured within 2% of each other not counted: run-to-run noise)."""
    out = []
    groups: dict[tuple, list[tuple]] = {}
    for r in rows:
        groups.setdefault((r[1], r[2]), []).append(r)
    for (model, nodes), rs in groups.items():
        pairs = [(a, b) for i, a in enumerate(rs) for b in rs[i + 1:]
                 if a[6] is not None and b[6] is not None and abs(a[4] / b[4] - 1) > 0.02]
        wrong = [(a, b) for a, b in pairs if (a[4] - b[4]) * (a[6] - b[6]) < 0]
        if wrong:
            a, b = wrong[0]
            out.append(f"{model} on {nodes} node{'s' if nodes != 1 else ''}: the fitted constants order {len(wrong)} of "
                       f"{len(pairs)} pairs of runs against the measurements (e.g. {a[3]} measured {a[4]:,.0f} and "
                       f"{b[3]} {b[4]:,.0f} tokens/s per device, predicted {a[6]:,.0f} and {b[6]:,.0f}): a plan ranks "
                       "such layouts with the same constants")
    return out


def print_fit_summary(cal, cross_validation: bool = True, hw=None) -> None:
    """The base / in-sample / cross-validated errors (stdout), then the records left out, an
    underdetermined fit, records that stay far from full memory (:func:`shardplan.calibrate.unmeasured_pressure`,
    with ``hw``) and the parameters held (stderr)."""
    for name, e in (("base", cal.base_error), ("fitted (in sample)", cal.in_sample)):
        console.print(f"{name}: {error_text(e)}", highlight=False)
    for name, e in cal.cross_validated.items():
        base = e.get("base_median_of_groups")
        console.print(f"{name}: throughput median |error| {e['throughput_median_of_groups']:.1%} "
                      f"over {e['groups']:.0f} held-out groups"
                      + (f" (base on the same groups: {base:.1%})" if base is not None else ""), highlight=False)
        for line in cal.cross_validated_groups:  # each group's own figure (one median hid a group missed by 0.7x)
            if line.startswith(f"{name}: "):
                console.print(f"  {escape(line.removeprefix(name + ': '))}", highlight=False)
    if not cross_validation:
        err_console.print("[yellow]note:[/] --no-cross-validation: the fit is not scored on held-out records, the check "
                          "that calls a fit worse than the base hardware poor; the written file says so "
                          f"(sources.{UNCHECKED_SOURCE}) and every command reading it repeats it", highlight=False,
                          soft_wrap=True)
    if cross_validation and not cal.cross_validated:
        err_console.print("[yellow]note:[/] no cross-validation: the records hold one model and one node count (or "
                          "nothing was fitted), so no group can be held out; the errors above are in-sample only, and "
                          "runs of another model or node count would say how well the fit predicts", highlight=False,
                          soft_wrap=True)
    if cal.usable_hbm_fraction is not None:
        console.print(f"usable_hbm_fraction {cal.usable_hbm_fraction:g}: the records that ran out of memory are "
                      "predicted not to fit above this fraction of HBM (chosen on the ok / oom records)")
    _print_left_out(cal)
    if cal.underdetermined:
        err_console.print(f"[yellow]warning:[/] {escape(cal.underdetermined)}", highlight=False)
    for line in cal.traded:
        err_console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False, soft_wrap=True)
    if cal.one_model:
        err_console.print(f"[yellow]note:[/] every record trains {escape(cal.one_model)}: the fitted constants are "
                          "checked on that model's shapes only; a plan for another model (another size, or dense where "
                          "it is MoE) with this file extrapolates", highlight=False, soft_wrap=True)
    from shardplan.calibrate import unmeasured_pressure
    if hw is not None and (pressure := unmeasured_pressure(cal, hw)):
        err_console.print(f"[yellow]note:[/] {escape(pressure)}", highlight=False, soft_wrap=True)
    fitted = dict(zip((p.field for p in cal.params), cal.values))
    if "context_bytes" in fitted and "context_bytes" not in cal.held and 0 < cal.n_oom <= 2:
        # a new user's one OOM record moved it 2.0 -> 4.45 GiB, just enough to put that run past the HBM
        err_console.print(f"[yellow]note:[/] context_bytes ({fitted['context_bytes'] / 2**30:.2f} GiB) rests on "
                          f"{cal.n_oom} out-of-memory record{'s' if cal.n_oom > 1 else ''}: the fit sets it just high "
                          "enough that they do not fit, so layouts near the HBM edge are judged by it; more runs close "
                          "to the HBM (that ran or ran out of memory) pin it", highlight=False, soft_wrap=True)
    for line in far_from_base(cal):
        err_console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False, soft_wrap=True)
    for field in cal.held:
        if field in cal.at_bound:
            err_console.print(f"[yellow]note:[/] {escape(bound_note(cal, field))}", highlight=False, soft_wrap=True)
            continue
        err_console.print(f"[yellow]note:[/] the records cannot identify {field}: {HELD_WHY.get(field, HELD_WHY[''])}; "
                          "kept at the base value and not written", highlight=False, soft_wrap=True)


#: what a rate or efficiency parameter on each bound says about the records (new-user pass 58: cross-node runs 50%
#: slow pushed scale_out_efficiency to its lower bound, and "the records cannot identify it" read as the opposite)
_BOUND_MEANING = {"lower": "slower than any value within its bounds explains", "upper": "faster than any value within "
                  "its bounds explains"}


def bound_note(cal, field: str) -> str:
    """Why ``field`` was held at its base value after the fit put it on a bound: on a rate's or efficiency's bound the
    records the parameter prices are slower (lower) or faster (upper) than any legal value explains, so a cost the
    model does not price is at work (for the network: NCCL / InfiniBand settings, GPUDirect RDMA, congestion); on
    another parameter's bound it trades against another parameter."""
    side = cal.at_bound[field]
    p = next(q for q in cal.params if q.field == field)
    rate = field.endswith(("efficiency", "bandwidth")) or field.startswith("peak")
    if rate:
        bound = p.lower if side == "lower" else p.upper
        what = ("runs that cross nodes" if field.startswith("scale_out") else "runs it prices")
        cause = ("a cost the model does not price is at work" if side == "lower" else
                 "the model prices a cost these runs do not pay")
        return (f"{field}: the fit put it on its {side} bound {bound:.3g}, so the {what} are "
                f"{_BOUND_MEANING[side]}: {cause}"
                + (" (check the network: NCCL / InfiniBand settings, GPUDirect RDMA, congestion)"
                   if field.startswith("scale_out") and side == "lower" else "")
                + "; kept at the base value and not written, and the other parameters fitted again without it, so "
                "they absorb what it could not (compare their fitted values with the base's)")
    return (f"the records cannot identify {field}: the fit put it on its {side} bound (a limit, not a measurement: it "
            "trades against another parameter, or the records push past what is physical); kept at the base value "
            "and not written")


#: a fitted efficiency below this share of its base value is named (:func:`far_from_base`)
FAR_FROM_BASE = 0.5


def far_from_base(cal) -> list[str]:
    """One line per fitted efficiency (a ``*_efficiency`` field that was not held) below :data:`FAR_FROM_BASE` of its
    base value, and for a fitted ``context_bytes`` above :data:`CONTEXT_PLAUSIBLE_BYTES`: a datasheet link or HBM at under half the rate the preset measured is rarely the hardware; more often
    a cost the records carry that the model prices elsewhere (new-user pass 55b: runs 12% slow everywhere moved
    hbm_efficiency 0.80 -> 0.29 and scale_out_efficiency 0.85 -> 0.27, and an MoE plan with the file came out 2.2x
    slower)."""
    out = []
    for p, v, b in zip(cal.params, cal.values, cal.base_values):
        if p.field.endswith("efficiency") and p.field not in cal.held and b > 0 and v < FAR_FROM_BASE * b:
            out.append(f"{p.field} fitted at {v:.3g}, under half its base {b:.3g}: if the hardware is not that slow, "
                       "the records carry a cost the model prices elsewhere (a per-step overhead, slower kernels); "
                       "other layouts with this file inherit it (check them, or fit without it: --params with the "
                       "others)")
        if p.field == "context_bytes" and p.field not in cal.held and v > CONTEXT_PLAUSIBLE_BYTES:
            out.append(f"context_bytes fitted at {v / 2**30:.2f} GiB (base {b / 2**30:.2f}): a CUDA context with NCCL's "
                       f"buffers takes about 1-3 GiB, so above {CONTEXT_PLAUSIBLE_BYTES / 2**30:.0f} GiB the fit more "
                       "likely moved it to put out-of-memory records past the HBM (their peaks or layouts may differ "
                       "from what the records say); every plan with this file reserves it, which can refuse layouts "
                       "that fit (check those records, or fit without it: --params with the others)")
    return out


#: a fitted runtime context above this is named (:func:`far_from_base`): the CUDA context and NCCL's buffers take about
#: 1-3 GiB on H100-class GPUs (PyTorch's caching allocator sees none of it; nvidia-smi does), so 4 GiB is generous
#: (new-user pass 58: four OOM records moved it 2.0 -> 7.8 GiB, 97% of its upper bound, without a word)
CONTEXT_PLAUSIBLE_BYTES = 4 * 2**30


def _same_file(a: str | None, b: str | None) -> bool:
    """Whether two hardware names are paths of one existing file (a record's absolute path, written by `record
    import`, and the --hardware typed relative to the current folder: a false alarm, new-user pass 56)."""
    try:
        return bool(a and b) and Path(str(a)).is_file() and Path(str(b)).is_file() and \
            Path(str(a)).resolve() == Path(str(b)).resolve()
    except OSError:
        return False


def _hardware_warning(recs: list, hardware: str, hw, given: bool = True) -> list[str]:
    """Warn when records name other hardware than the fit prices them on (``--hardware``, default h100-sxm):
    a preset (or alias) other than ``--hardware``'s base preset, or a name that is neither a preset nor that
    file. The fit reads no record's hardware field. Returns those names (sorted)."""
    from shardplan.loaders import hardware_document
    from shardplan.presets.hardware import hardware_preset_name
    base = hardware_document(hardware, hw, hw.name).get("base") or hw.name
    other = sorted({r.hardware for r in recs if r.hardware not in (hardware, hw.name, Path(hardware).stem)
                    and not _same_file(r.hardware, hardware)
                    and (hardware_preset_name(r.hardware) or "?") != hardware_preset_name(str(base))})
    if other:
        how = ("the records' hardware field only labels them" if given
               else "the default; give the hardware they ran on with --hardware")
        n_other = sum(r.hardware in other for r in recs)
        who = "the records name" if n_other == len(recs) else f"{n_other} of the {len(recs)} records name"
        err_console.print(f"[yellow]warning:[/] {who} hardware {', '.join(escape(repr(h)) for h in other)}; "
                          f"the fit prices every record on {escape(hardware)} ({how})", highlight=False,
                          soft_wrap=True)
    return other
