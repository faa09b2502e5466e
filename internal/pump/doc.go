// Package pump delivers events to a channel without bound, so that whoever
// sends them (the zkmem server, the sim scheduler, gozk's event loop) never
// waits for a slow reader.
//
// It serves zkmem's session-event and persistent-watch channels, the
// simulator's session-event channels and gozk's session-event channels: a
// Pump takes events with Push, from any goroutine, and hands them in order
// to its channel from a goroutine of its own.
package pump
