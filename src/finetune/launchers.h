// The launchers' pieces, shared by PlanLaunch and the Slurm batch script.
#pragma once

#include <string>
#include <vector>

#include "kforge/finetune/launch.h"

namespace kforge::finetune {

/// The run folder's files.
inline constexpr const char* kTrlConfigFile = "trl_config.json";
inline constexpr const char* kAxolotlConfigFile = "axolotl.yaml";
inline constexpr const char* kSbatchFile = "launch.sbatch";
/// The rendezvous port on the first node of a Slurm job is drawn by its batch script from
/// [base, base + span), by the job id and a random number: two jobs sharing a node never rely on one
/// fixed port (the second one's rendezvous would fail).
inline constexpr int kSlurmRendezvousPortBase = 20000;
inline constexpr int kSlurmRendezvousPortSpan = 20000;
/// Seconds before its time limit that Slurm sends the batch script SIGTERM (`--signal=B:TERM@120`).
inline constexpr int kSlurmSignalLeadSeconds = 120;

/// `program` from the folder of `python` when it is there (the same environment), else the bare
/// name, found on PATH when it runs.
std::string Beside(const std::string& python, const char* program);

/// The Python's folder when it is given as a path, else empty.
std::string PythonFolder(const std::string& python);

/// What each trainer process runs, after the launcher's own arguments: the TRL script and its
/// arguments, or `-m axolotl.cli.train CONFIG`.
std::vector<std::string> TrainerArgs(const LaunchOptions& options, const std::filesystem::path& config);

/// The Slurm batch script: one task per node, each running torchrun with a c10d rendezvous on the
/// job's first node. Every value that comes from the user is shell-quoted.
std::string RenderSbatch(const LaunchOptions& options, const std::filesystem::path& config);

}  // namespace kforge::finetune
