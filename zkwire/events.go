package zkwire

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Event is one entry of the server's event log (GET /events and
// Server.Events): a session opened ("open"), resumed by its client from a
// new connection ("reconnect"), closed by its client ("close") or expired
// ("expired": seen when its connection closes, or up to a second after its
// timeout for a session left without a connection), a fault
// that hit a session (named as in SessionStatus.Fired: "resume" is the end
// of a pause), a reset or a restart.
type Event struct {
	Seq     int64     `json:"seq"` // 1, 2, 3... in the order they happened
	At      time.Time `json:"at"`
	Event   string    `json:"event"` // "open", "reconnect", "close", "expired", a fault's name, "reset", "restart"
	Session int64     `json:"session,omitempty"`
	Hex     string    `json:"hex,omitempty"`
	Client  string    `json:"client,omitempty"`
	Op      string    `json:"op,omitempty"`
	Path    string    `json:"path,omitempty"`
}

// maxEvents bounds the events the log keeps.
const maxEvents = 10000

// eventLog is the server's event log: the latest maxEvents events, and a
// channel closed when the next one comes.
type eventLog struct {
	mu     sync.Mutex
	seq    int64
	events []Event
	next   chan struct{}
}

func (l *eventLog) add(e Event) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e.Seq = l.seq
	if len(l.events) == maxEvents {
		l.events = append(l.events[:0], l.events[1:]...)
	}
	l.events = append(l.events, e)
	if l.next != nil {
		close(l.next)
		l.next = nil
	}
	return e
}

// since returns the events after seq, or, if none, a channel closed when
// one comes.
func (l *eventLog) since(seq int64) ([]Event, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := len(l.events)
	for i > 0 && l.events[i-1].Seq > seq {
		i--
	}
	if i < len(l.events) {
		return append([]Event(nil), l.events[i:]...), nil
	}
	if l.next == nil {
		l.next = make(chan struct{})
	}
	return nil, l.next
}

// Events returns the events of the log after seq (0: from the first the
// log keeps, the latest 10,000), waiting until there is one or ctx is done
// (then it returns ctx's error and no events). A test waits for a fault to
// fire with it: arm the fault, remember the last Seq, wait for an event
// after it.
func (s *Server) Events(ctx context.Context, seq int64) ([]Event, error) {
	for {
		evs, next := s.events.since(seq)
		if evs != nil {
			return evs, nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// note adds an event of session rec (nil for a server event) to the log,
// to its record if it is a fault, and to Options.Logf.
func (s *Server) note(rec *record, event, op, path string) {
	e := Event{At: time.Now(), Event: event, Op: op, Path: path}
	if rec != nil {
		e.Session, e.Hex = rec.id, fmt.Sprintf("0x%x", uint64(rec.id))
		rec.mu.Lock()
		e.Client = rec.client
		rec.mu.Unlock()
		switch event {
		case "open", "reconnect", "close", "expired":
		default:
			rec.fire(event, op, path, e.At)
		}
	}
	e = s.events.add(e)
	if s.opts.Logf != nil {
		msg := event
		if rec != nil {
			msg = fmt.Sprintf("session %s (%s): %s", e.Hex, e.Client, event)
		}
		if op != "" {
			msg += " " + op
		}
		if path != "" {
			msg += " " + path
		}
		s.opts.Logf("%s", msg)
	}
}

// logf logs to Options.Logf, if set.
func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}
