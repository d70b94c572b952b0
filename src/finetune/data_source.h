// Datasets that are not JSON lines (a Parquet file, a Hub dataset id): their rows written as JSON lines
// into the run folder with `sft_trl.py --to-jsonl`, which the check and the trainer then read.
#pragma once

#include "kforge/finetune/run.h"

namespace kforge::finetune {

/// Writes the rows of `data_source` (and `eval_data_source`) into OUT/data/train.jsonl (validation.jsonl)
/// with the options' Python and points `data` (`eval_data`) at them; `note` gets one line each. Nothing
/// to do when both are empty. InvalidArgument with the converter's own line when it fails.
Status ConvertData(LaunchOptions& options, const RunOutput& output);

}  // namespace kforge::finetune
