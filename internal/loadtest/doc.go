// Package loadtest drives a RockStream server through the PostgreSQL wire
// protocol with many concurrent clients and checks what they observed:
// every acknowledged write is present exactly once, nothing rolled back
// is, reads never go backwards and see every write acknowledged before
// they started (read-your-writes across connections), subscribers see the
// changes in epoch order, and after the clients and the server stop, the
// process is back to its goroutines and about its memory from before.
//
// The server runs in the test process (internal/gateway over an engine on
// a temporary directory) so that its goroutines and heap can be measured.
package loadtest
