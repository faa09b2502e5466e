// Package sched is the deterministic scheduler of the property tests: a
// gate that every client request (and every write to a protected resource)
// passes through. A request does not reach the server until the test
// releases it, with a fault or without, so only one client runs at a time
// and the order of events is chosen by the test (by rapid draws), not by
// goroutine timing.
//
// It is meant to run inside a testing/synctest bubble: a client blocked in
// the gate is durably blocked, so synctest.Wait returns once every client
// has either finished or is waiting in the gate (or on a watch, a timer).
package sched
