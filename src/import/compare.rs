//! Loading the inputs of a comparison: each file through the usual importers (any
//! format; samples aggregated, a trace of spans refused with its name), then their
//! difference ([`crate::model::compare`]).

use super::{ImportError, ImportOptions, Imported, Progress, load_any_path_with_options};
use crate::model::compare::{CompareOptions, compare_runs, diff_profiles};
use crate::model::{Document, Profile};
use std::path::{Path, PathBuf};

/// The false-discovery rate of many-run comparisons.
pub const RUNS_ALPHA: f64 = 0.05;

/// What to compare: one file against one, or runs against runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompareInputs {
    /// "Before": one file, or the base runs.
    pub before: Vec<PathBuf>,
    /// "After": one file, or the runs compared with the base.
    pub after: Vec<PathBuf>,
    /// How names are matched and "before" scaled.
    pub options: CompareOptions,
}

impl CompareInputs {
    /// Several runs on a side: a many-run comparison.
    pub fn is_runs(&self) -> bool {
        self.before.len() > 1 || self.after.len() > 1
    }

    /// `before.txt → after.txt`, or `3 runs → 3 runs`, for titles.
    pub fn title(&self) -> String {
        let side = |v: &[PathBuf]| match v {
            [one] => crate::model::document::file_name(&one.display().to_string()),
            many => format!("{} runs", many.len()),
        };
        format!("{} → {}", side(&self.before), side(&self.after))
    }
}

/// The call tree of the input at `path` (a sampled input's samples aggregated).
pub fn load_profile(
    path: &Path,
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Profile, ImportError> {
    match load_any_path_with_options(path, options, progress)? {
        Imported::Profile(p) => Ok(*p),
        Imported::Trace(t) => {
            let format = t.format;
            let doc = Document::from(Imported::Trace(t));
            match doc.as_profile() {
                Some(p) => Ok((*p).clone()),
                None => Err(ImportError::IsTrace {
                    file: path.display().to_string(),
                    format,
                }),
            }
        }
    }
}

/// Loads every input and compares them.
pub fn load_comparison(
    inputs: &CompareInputs,
    options: ImportOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Profile, ImportError> {
    let load = |v: &[PathBuf]| -> Result<Vec<Profile>, ImportError> {
        v.iter()
            .map(|p| load_profile(p, options, progress))
            .collect()
    };
    let (before, after) = (load(&inputs.before)?, load(&inputs.after)?);
    let overflow = |what: &str| ImportError::Invalid {
        file: inputs.title(),
        location: what.to_string(),
        message: "the compared totals exceed 2^64 - 1".to_string(),
    };
    if inputs.is_runs() {
        compare_runs(&before, &after, inputs.options, RUNS_ALPHA).map_err(|_| overflow("runs"))
    } else {
        let (Some(b), Some(a)) = (before.first(), after.first()) else {
            return Err(ImportError::Invalid {
                file: inputs.title(),
                location: "arguments".into(),
                message: "a comparison needs a file on each side".into(),
            });
        };
        diff_profiles(b, a, inputs.options).map_err(|_| overflow("totals"))
    }
}
