// Package memgov is the memory governor: it keeps the process under its
// memory limit by stopping the statement that would take it past.
//
// There is one Governor per process (Process). Every statement runs with
// an Account opened on it (Open), which carries the statement's context
// and its work_mem. The structures that grow with the data a statement
// handles — rows its operators emit, the relation contents it reads, the
// state an ad-hoc query builds, sort buffers, result buffers, the text
// of a huge statement or COPY line — charge their bytes to the account
// (Charge, Grow), as estimates of what they hold: Go values are counted
// by their size, not by the allocator's rounding.
//
// Invariants:
//   - A charge never waits for another statement. It checks the limit
//     every CheckBytes of growth: a charge that finds the process's
//     resident set past PressureFraction of the limit stops the account
//     holding the most memory (not necessarily its own) by canceling its
//     context with an out-of-memory cause (53200). The statement then
//     stops where it next looks at its context, as on a cancel request,
//     and reports that cause.
//   - A sampler goroutine, running while a limit is set, looks at the
//     resident set every SampleInterval for the growth no charge saw,
//     and stops the largest account the same way. Before it stops one it
//     collects garbage and looks again, so that memory already released
//     is not blamed on a statement.
//   - Closing an account returns all of its charges; the memory itself is
//     freed by the next garbage collection, which the Go runtime's soft
//     limit (set to SoftFraction of the limit) runs early enough.
//   - Only an account holding at least 1/32 of the limit is ever
//     stopped: a statement that has charged little is not blamed for the
//     process's memory. A stopped account, once closed, returns the
//     garbage to the system before its statement reports the error.
package memgov
