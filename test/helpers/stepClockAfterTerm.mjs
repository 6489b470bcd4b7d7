// Preload for CLI tests (`node --import`): the system clock as an NTP step would leave it. After the
// process sends its first SIGTERM, the first read of `Date.now` is still the true time and every later
// one is `SVC_TEST_CLOCK_STEP_MS` (default an hour) away, as if the clock was stepped right after the
// command started timing its wait. Instrumentation only: what the command does is unchanged.
const step = Number(process.env.SVC_TEST_CLOCK_STEP_MS ?? 3_600_000);
const realNow = Date.now;
const realKill = process.kill;
let readsSinceTerm = -1;
Date.now = () => {
  if (readsSinceTerm < 0) return realNow();
  readsSinceTerm += 1;
  return readsSinceTerm === 1 ? realNow() : realNow() + step;
};
process.kill = function kill(pid, signal) {
  const sent = realKill.call(this, pid, signal);
  if (signal === "SIGTERM" && readsSinceTerm < 0) readsSinceTerm = 0;
  return sent;
};
