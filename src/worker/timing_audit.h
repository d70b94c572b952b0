// Correct candidates that cheat only on speed, against a task's timed runs (`kforge tasks audit
// --timing`): each is the task's honest work with a shortcut that state kept between runs would make
// safe, and the timed runs' defences (globals restored, distinct draws, every run checked) must leave it
// no faster than the honest work alone.
#pragma once

#include "kforge/verify/worker_protocol.h"
#include "worker/check.h"

namespace kforge::worker {

/// Times, through bench's checked timed runs on the task's first variant:
///   honest          the task's reference run into the candidate's output buffers, with the cheats'
///                   bookkeeping (an input fingerprint, a decision read back) but never a shortcut;
///   memo            keeps its last outputs in a `__device__` array keyed by a fingerprint of its
///                   inputs, and replays them when the key matches (outputs up to kMemoBytes);
///   launch_counter  skips the work once a `__device__` counter has seen two launches;
///   relaunch_flag   skips the work once a `__device__` flag says it ran before;
///   control:memo_unrestored  the memo on one draw without the restore of its globals: it must take
///                   its shortcut, which shows the cheat works where the defence is off.
/// The state lives in a real CUBIN's module-scope variables, restored before each run as a candidate's
/// are. Each cheat is timed interleaved with the honest work, over the same sets, so their medians
/// compare. A cheat is accepted when a run that passed its check took the shortcut.
verify::TaskAuditReply RunTimingAudit(GpuChecker& checker, const verify::TaskAuditRequest& request);

}  // namespace kforge::worker
