// SIGINT/SIGTERM as a flag the daemons' loops poll, so a stop request ends
// the run at a step boundary (checkpoint, report, goodbye) instead of killing
// it mid-write.
#pragma once

namespace mt {

void InstallStopSignalHandlers();
bool StopRequested();
void RequestStop();  // for tests and embedders

}  // namespace mt
