//! `protoprof convert` (pprof <-> OTLP) and `protoprof merge`.

use std::io::Write;
use std::path::{Path, PathBuf};

use protoprof_analysis::Selection;
use protoprof_codec::{AutoView, DevelopmentView, ExperimentalView};
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_model_pprof::samples::ProfileSamples;
use protoprof_pprof_bridge::{
    pprof_to_development, pprof_to_development_encoding, pprof_to_otlp, pprof_to_otlp_encoding,
    ProfileId, ToDevelopmentOptions, ToOtlpOptions,
};

use crate::cli::{
    ConvertArgs, Encoding, FilterArgs, InputArgs, MergeArgs, OtlpVersion, RawArgs, Target,
};
use crate::error::{CliError, Context, Result};
use crate::io::{self, check_not_input, shown, write_output};

pub fn run(args: &ConvertArgs) -> Result<u8> {
    io::set_converting(args.drop_invalid);
    let path = args.file.as_path();
    let decoded = io::decode_view(path, io::read_input(path)?, None)?;
    if let Some(dir) = &args.split {
        return split(args, dir, decoded);
    }
    let output = args
        .output
        .as_deref()
        .expect("clap requires -o without --split");
    check_not_input(output, &[path], args.in_place).map_err(|mut refused| {
        refused.message.push_str(" (--in-place replaces it)");
        refused
    })?;
    if args.in_place {
        io::allow_overwriting_inputs();
    }
    if args.to == Target::Pprof && !args.resources.is_empty() {
        return Err(CliError::failure("--resource only goes with --to otlp"));
    }
    match (args.to, decoded) {
        (Target::Otlp, decoded) => to_otlp(args, decoded, output)?,
        (Target::Pprof, AutoView::Development(view)) if args.format == Encoding::Binary => {
            return development_to_pprof_file(args, output, view.message);
        }
        (Target::Pprof, AutoView::Experimental(view)) if args.format == Encoding::Binary => {
            return experimental_to_pprof_file(args, output, view.message);
        }
        (Target::Pprof, decoded) => write_output(output, &to_pprof(args, decoded)?)?,
    };
    Ok(0)
}

/// How an encoding writes itself to the output.
type WriteFn<'a> = &'a dyn Fn(&mut dyn Write) -> std::io::Result<()>;

/// An encoding written to `output` as it is made (gzipped when asked):
/// the output is never held whole.
fn write_streamed(output: &Path, gzip: bool, write: WriteFn) -> Result<()> {
    io::write_output_gzip(output, gzip, write)
}

/// `--split DIR`: one pprof file per OTLP profile (v1development) or
/// container (v1experimental), named by position and sample types.
fn split(args: &ConvertArgs, dir: &Path, decoded: AutoView) -> Result<u8> {
    let path = args.file.as_path();
    let decoded = decoded.without_otlp_views();
    let message = match (&decoded, args.to) {
        (AutoView::Other(other), Target::Pprof) => &*other.decoded.message,
        _ => {
            return Err(CliError::failure(
                "--split goes with --to pprof and OTLP input (one pprof file per OTLP profile)",
            ))
        }
    };
    let profiles = if let Some(mut data) = io::development_data(message) {
        io::development_each(path, &mut data)?
    } else if let Some(mut data) = io::otlp_data(message) {
        io::experimental_each(path, &mut data)?
    } else {
        return Err(CliError::failure(format!(
            "{}: --split needs OTLP profiles",
            shown(path)
        )));
    };
    std::fs::create_dir_all(dir).context(dir.display().to_string())?;
    for (n, (at, profile)) in profiles.iter().enumerate() {
        let file = dir.join(split_file_name(n, profile, args.gzip));
        write_output(&file, &io::encode_as(profile, args.format, args.gzip)?)?;
        io::print(&format!(
            "{}\t{at}\t{} samples\n",
            file.display(),
            profile.sample.len()
        ))?;
    }
    Ok(0)
}

/// `003-cpu-nanoseconds.pb` (`.pb.gz` with --gzip): the position, then the
/// sample types, with anything but letters, digits, `.` and `_` as `-`.
fn split_file_name(n: usize, profile: &Profile, gzip: bool) -> String {
    use protoprof_model_meta::StringTable;
    let types: Vec<String> = profile
        .sample_type
        .iter()
        .map(|t| format!("{}-{}", profile.string(t.type_), profile.string(t.unit)))
        .collect();
    let clean: String = types
        .join("-")
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                true => c,
                false => '-',
            },
        )
        .take(80)
        .collect();
    let extension = if gzip { "pb.gz" } else { "pb" };
    format!("{n:03}-{clean}.{extension}")
}

/// pprof into the OTLP version asked for; OTLP of that version re-encoded
/// (an older v1development revision so comes out as the current one); OTLP
/// of the other version through pprof, with the bridge's warnings.
fn to_otlp(args: &ConvertArgs, decoded: AutoView, output: &Path) -> Result<()> {
    let path = args.file.as_path();
    let other = match decoded {
        AutoView::Pprof(view) => return pprof_to_otlp_version(args, &view.message, output),
        // The other version: through pprof samples converted as they are
        // read, never held.
        AutoView::Development(view) if args.otlp_version == OtlpVersion::V1experimental => {
            let mut view = view.message;
            let converted = io::development_as_pprof(path, &mut view)?;
            return pprof_to_otlp_version(args, &converted.reading(&view), output);
        }
        AutoView::Experimental(view) if args.otlp_version == OtlpVersion::V1development => {
            let mut view = view.message;
            return match io::experimental_as_pprof(path, &mut view) {
                Some(converted) => pprof_to_otlp_version(args, &converted?.reading(&view), output),
                None => {
                    let profile = io::experimental_whole_as_pprof(path, view)?;
                    pprof_to_otlp_version(args, &profile, output)
                }
            };
        }
        view @ (AutoView::Development(_) | AutoView::Experimental(_) | AutoView::Other(_)) => {
            view.into_decoded()
        }
    };
    let message = &*other.decoded.message;
    let is_development = io::development_data(message).is_some();
    if !is_development && io::otlp_data(message).is_none() {
        return Err(CliError::failure(format!(
            "{}: --to otlp needs a pprof profile or OTLP profiles, this is {}",
            shown(path),
            other.descriptor.full_name()
        )));
    }
    let same_version = is_development == (args.otlp_version == OtlpVersion::V1development);
    if same_version {
        if !args.resources.is_empty() {
            return Err(CliError::failure(
                "--resource goes with pprof input (or OTLP of the other version)",
            ));
        }
        return write_output(output, &io::encode_as(message, args.format, args.gzip)?);
    }
    let profile = io::otlp_message_as_pprof(path, message).expect("OTLP profiles")?;
    pprof_to_otlp_version(args, &profile, output)
}

/// pprof to the OTLP version asked for, written to `output`. Binary output
/// is written from the converted tables as it is encoded; v1development's
/// reads values and stacks from `source` again as it goes.
fn pprof_to_otlp_version<S: ProfileSamples>(
    args: &ConvertArgs,
    source: &S,
    output: &Path,
) -> Result<()> {
    let path = args.file.as_path();
    let resource_attributes = io::resource_attributes(&args.resources)?;
    let profile_id = match args.deterministic_id {
        true => ProfileId::ContentHash,
        false => ProfileId::Random,
    };
    if args.otlp_version == OtlpVersion::V1development {
        let options = ToDevelopmentOptions {
            resource_attributes,
            profile_id,
            ..Default::default()
        };
        if args.format != Encoding::Binary {
            let converted = pprof_to_development(source, &options).context(shown(path))?;
            io::print_bridge_warnings(path, &converted.warnings);
            return write_output(
                output,
                &io::encode_as(&converted.value, args.format, args.gzip)?,
            );
        }
        // Written straight from the converted tables: no message per sample.
        let converted = pprof_to_development_encoding(source, &options).context(shown(path))?;
        io::print_bridge_warnings(path, &converted.warnings);
        let encoding = converted.value;
        return write_streamed(output, args.gzip, &|out| encoding.write_to(out));
    }
    let options = ToOtlpOptions {
        resource_attributes,
        profile_id,
        ..Default::default()
    };
    if args.format != Encoding::Binary {
        let data = pprof_to_otlp(source, &options).context(shown(path))?;
        return write_output(output, &io::encode_as(&data, args.format, args.gzip)?);
    }
    // Written straight from the converted tables: no OTLP message per sample.
    let encoding = pprof_to_otlp_encoding(source, &options).context(shown(path))?;
    write_streamed(output, args.gzip, &|out| encoding.write_to(out))
}

/// OTLP v1development to binary pprof in `output`: each sample converted
/// as it is read and written as it is converted, after the dictionary is
/// shed, so neither the converted samples nor the output are held.
fn development_to_pprof_file(
    args: &ConvertArgs,
    output: &Path,
    mut view: DevelopmentView,
) -> Result<u8> {
    let converted = io::development_as_pprof(args.file.as_path(), &mut view)?;
    let source = converted.reading(&view);
    write_streamed(output, args.gzip, &|out| {
        protoprof_codec::write_pprof_source(&source, out).map_err(std::io::Error::other)
    })?;
    Ok(0)
}

/// OTLP v1experimental to binary pprof in `output`, as
/// [`development_to_pprof_file`] writes v1development: one container's
/// samples converted and written as they are read; several containers
/// decoded whole and merged.
fn experimental_to_pprof_file(
    args: &ConvertArgs,
    output: &Path,
    mut view: ExperimentalView,
) -> Result<u8> {
    let path = args.file.as_path();
    let Some(converted) = io::experimental_as_pprof(path, &mut view) else {
        let profile = io::experimental_whole_as_pprof(path, view)?;
        write_output(output, &io::encode_as(&profile, args.format, args.gzip)?)?;
        return Ok(0);
    };
    let converted = converted?;
    let source = converted.reading(&view);
    write_streamed(output, args.gzip, &|out| {
        protoprof_codec::write_pprof_source(&source, out).map_err(std::io::Error::other)
    })?;
    Ok(0)
}

fn to_pprof(args: &ConvertArgs, decoded: AutoView) -> Result<Vec<u8>> {
    let path = args.file.as_path();
    let other = match decoded {
        // Text forms hold the whole model anyway (binary is streamed:
        // `development_to_pprof_file`).
        AutoView::Development(view) => {
            let view = io::development_as_pprof_view(path, view.message)?;
            return io::encode_as(&view.into_profile(), args.format, args.gzip);
        }
        AutoView::Experimental(view) => {
            let view = io::experimental_as_pprof_view(path, view.message)?;
            return io::encode_as(&view.into_profile(), args.format, args.gzip);
        }
        AutoView::Other(other) => other,
        AutoView::Pprof(_) => {
            return Err(CliError::failure(format!(
                "{}: --to pprof needs OTLP profiles, this is perftools.profiles.Profile",
                shown(path),
            )))
        }
    };
    let profile = io::otlp_message_as_pprof(path, &*other.decoded.message).ok_or_else(|| {
        CliError::failure(format!(
            "{}: --to pprof needs OTLP profiles, this is {}",
            shown(path),
            other.descriptor.full_name()
        ))
    })??;
    io::encode_as(&profile, args.format, args.gzip)
}

/// `filter`: the inputs merged, bases subtracted, filters applied, written
/// as pprof (what `go tool pprof -proto` writes).
pub fn filter(args: &FilterArgs) -> Result<u8> {
    let input = &args.input;
    let files = [&input.files[..], &input.base[..], &input.diff_base[..]].concat();
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    check_not_input(&args.output, &inputs, false)?;
    let selection = super::analyze::selection(&args.selection)?;
    let mut filtered = filtered(input, &selection)?;
    // pprof's -proto writes the values -divide_by shows.
    if let Some(ratio) = selection.value_ratio() {
        for sample in &mut filtered.sample {
            for v in &mut sample.value {
                *v = protoprof_analysis::report::ratio_scaled(*v, Some(ratio));
            }
        }
    }
    write_output(
        &args.output,
        &io::encode_as(&filtered, Encoding::Binary, args.gzip)?,
    )?;
    Ok(0)
}

/// `protoprof raw`: what `filter` writes, as pprof's `-raw` prints it.
pub fn raw(args: &RawArgs) -> Result<u8> {
    let selection = super::analyze::selection(&args.selection)?;
    let filtered = filtered(&args.input, &selection)?;
    let text = protoprof_analysis::raw_text(&filtered, selection.names_as_given);
    io::write_stdout(|out| out.write_all(text.as_bytes())).map(|_| 0)
}

/// The profile `input` names (combined, label frames added) with the
/// filters of `selection` applied.
fn filtered(input: &InputArgs, selection: &Selection) -> Result<Profile> {
    let mut profile = super::analyze::combined(input)?;
    super::analyze::add_label_frames(&mut profile, input);
    Ok(protoprof_analysis::filtered_profile(&profile, selection))
}

pub fn merge(args: &MergeArgs) -> Result<u8> {
    let (files, output, gzip) = (&args.files, args.output.as_path(), args.gzip);
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    check_not_input(output, &inputs, false)?;
    let merged = super::analyze::merge_files(files)?;
    write_output(output, &io::encode_as(&merged, Encoding::Binary, gzip)?)?;
    Ok(0)
}
