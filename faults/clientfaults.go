package faults

import (
	"fmt"
	"time"

	"github.com/zksim/zksim/sim"
)

// AnyClient as a fault's Client has the client drawn from the World's fault
// generator, among the live ones, when the fault strikes.
const AnyClient = -1

func clientName(c int) string {
	if c == AnyClient {
		return "c?"
	}
	return fmt.Sprintf("c%d", c)
}

// resolveClient returns c, or when c is AnyClient a live client drawn from
// w's fault generator (with unpaused, not a paused one); ok is false when
// there is none to draw.
func resolveClient(w *sim.World, c int, unpaused bool) (client int, ok bool) {
	if c != AnyClient {
		return c, true
	}
	var live []int
	for i := range w.NumClients() {
		if w.Live(i) && !(unpaused && w.Paused(i)) {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return -1, false
	}
	return live[w.Rand().IntN(len(live))], true
}

// Disconnect drops the client's connection; the session lives on. With For
// >= 0 the client starts reconnecting after For; with For < 0 it stays
// down until a Reconnect fault.
type Disconnect struct {
	Client int
	For    time.Duration
}

func (f Disconnect) String() string {
	if f.For < 0 {
		return fmt.Sprintf("Disconnect(%s)", clientName(f.Client))
	}
	return fmt.Sprintf("Disconnect(%s, %v)", clientName(f.Client), f.For)
}

// Inject implements sim.Fault.
func (f Disconnect) Inject(w *sim.World) error { return w.Disconnect(f.Client, f.For) }

// Resolve implements sim.Resolver.
func (f Disconnect) Resolve(w *sim.World) sim.Fault {
	var ok bool
	if f.Client, ok = resolveClient(w, f.Client, false); !ok {
		return nil
	}
	return f
}

// Reconnect brings a disconnected client back to its session.
type Reconnect struct{ Client int }

func (f Reconnect) String() string { return fmt.Sprintf("Reconnect(%s)", clientName(f.Client)) }

// Inject implements sim.Fault.
func (f Reconnect) Inject(w *sim.World) error { return w.Reconnect(f.Client) }

// Expire makes the server expire the client's session now.
type Expire struct{ Client int }

func (f Expire) String() string { return fmt.Sprintf("Expire(%s)", clientName(f.Client)) }

// Inject implements sim.Fault.
func (f Expire) Inject(w *sim.World) error { return w.Expire(f.Client) }

// Resolve implements sim.Resolver.
func (f Expire) Resolve(w *sim.World) sim.Fault {
	var ok bool
	if f.Client, ok = resolveClient(w, f.Client, false); !ok {
		return nil
	}
	return f
}

// Pause stops the client for For (until a Resume fault if For < 0): no
// requests, no deliveries, no heartbeats.
type Pause struct {
	Client int
	For    time.Duration
}

func (f Pause) String() string {
	if f.For < 0 {
		return fmt.Sprintf("Pause(%s)", clientName(f.Client))
	}
	return fmt.Sprintf("Pause(%s, %v)", clientName(f.Client), f.For)
}

// Inject implements sim.Fault.
func (f Pause) Inject(w *sim.World) error { return w.Pause(f.Client, f.For) }

// Resolve implements sim.Resolver.
func (f Pause) Resolve(w *sim.World) sim.Fault {
	var ok bool
	if f.Client, ok = resolveClient(w, f.Client, true); !ok {
		return nil
	}
	return f
}

// Resume ends a pause.
type Resume struct{ Client int }

func (f Resume) String() string { return fmt.Sprintf("Resume(%s)", clientName(f.Client)) }

// Inject implements sim.Fault.
func (f Resume) Inject(w *sim.World) error { return w.Resume(f.Client) }

// Delay holds back deliveries to the client for For.
type Delay struct {
	Client int
	For    time.Duration
}

func (f Delay) String() string { return fmt.Sprintf("Delay(%s, %v)", clientName(f.Client), f.For) }

// Inject implements sim.Fault.
func (f Delay) Inject(w *sim.World) error { return w.Delay(f.Client, f.For) }

// Resolve implements sim.Resolver.
func (f Delay) Resolve(w *sim.World) sim.Fault {
	var ok bool
	if f.Client, ok = resolveClient(w, f.Client, false); !ok {
		return nil
	}
	return f
}

// LoseNextReply loses the reply of the client's next request with Op (""
// for any op): the server applies it, the client gets ErrConnectionLoss.
type LoseNextReply struct {
	Client int
	Op     string
}

func (f LoseNextReply) String() string {
	return fmt.Sprintf("LoseNextReply(%s, %s)", clientName(f.Client), opName(f.Op))
}

// Inject implements sim.Fault.
func (f LoseNextReply) Inject(w *sim.World) error {
	w.LoseNextReply(f.Client, f.Op)
	return nil
}

// Resolve implements sim.Resolver.
func (f LoseNextReply) Resolve(w *sim.World) sim.Fault {
	var ok bool
	if f.Client, ok = resolveClient(w, f.Client, false); !ok {
		return nil
	}
	return f
}

// DropNextRequest loses the client's next request with Op ("" for any op)
// before the server sees it; the client gets ErrConnectionLoss.
type DropNextRequest struct {
	Client int
	Op     string
}

func (f DropNextRequest) String() string {
	return fmt.Sprintf("DropNextRequest(%s, %s)", clientName(f.Client), opName(f.Op))
}

// Inject implements sim.Fault.
func (f DropNextRequest) Inject(w *sim.World) error {
	w.DropNextRequest(f.Client, f.Op)
	return nil
}

// Resolve implements sim.Resolver.
func (f DropNextRequest) Resolve(w *sim.World) sim.Fault {
	var ok bool
	if f.Client, ok = resolveClient(w, f.Client, false); !ok {
		return nil
	}
	return f
}

// SlowServer adds Extra to the service time of every request for For (for
// good if For <= 0).
type SlowServer struct {
	Extra time.Duration
	For   time.Duration
}

func (f SlowServer) String() string {
	if f.For <= 0 {
		return fmt.Sprintf("SlowServer(+%v)", f.Extra)
	}
	return fmt.Sprintf("SlowServer(+%v, %v)", f.Extra, f.For)
}

// Inject implements sim.Fault.
func (f SlowServer) Inject(w *sim.World) error {
	w.SlowServer(f.Extra, f.For)
	return nil
}

func opName(op string) string {
	if op == "" {
		return "any"
	}
	return op
}
