package zkmem

import "fmt"

// Fault is what happens to one request on its way to the server and back.
type Fault int

const (
	// NoFault: the request is applied and answered.
	NoFault Fault = iota
	// DropRequest: the connection breaks before the server sees the
	// request. It is not applied; the caller gets ErrConnectionLoss.
	DropRequest
	// LoseReply: the server applies the request, then the connection
	// breaks before the reply arrives; the caller gets ErrConnectionLoss.
	LoseReply
)

func (f Fault) String() string {
	switch f {
	case NoFault:
		return "NoFault"
	case DropRequest:
		return "DropRequest"
	case LoseReply:
		return "LoseReply"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// The request names a fault hook sees in Request.Op: ZooKeeper's op names.
const (
	OpCreate               = "create"
	OpDelete               = "delete"
	OpExists               = "exists"
	OpGetData              = "getData"
	OpSetData              = "setData"
	OpGetChildren          = "getChildren"
	OpMulti                = "multi"
	OpSync                 = "sync"
	OpGetACL               = "getACL"
	OpSetACL               = "setACL"
	OpAddAuth              = "addAuth"
	OpAddWatch             = "addWatch"
	OpRemoveWatches        = "removeWatches"
	OpGetEphemerals        = "getEphemerals"
	OpGetAllChildrenNumber = "getAllChildrenNumber"
)

// Request is what a fault hook is told about a request: its op name (one of
// the Op constants) and the path it acts on (the first op's path for a multi).
type Request struct {
	Op   string
	Path string
}

func (r Request) String() string { return r.Op + " " + r.Path }

type armedFault struct {
	op    string // "" matches any op
	fault Fault
}

// SetFaultHook installs h, which is consulted before every request this Conn
// sends and decides its fault. nil removes the hook. Faults armed with
// LoseNextReply and DropNextRequest take precedence, once each.
func (c *Conn) SetFaultHook(h func(Request) Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hook = h
}

// LoseNextReply arranges for the next request with the given op ("" for any
// op) to be applied by the server while its reply is lost: the caller gets
// ErrConnectionLoss and the connection drops (it comes back after the
// reconnect delay).
func (c *Conn) LoseNextReply(op string) { c.arm(op, LoseReply) }

// DropNextRequest arranges for the next request with the given op ("" for
// any op) to be lost before the server sees it: the caller gets
// ErrConnectionLoss and the connection drops.
func (c *Conn) DropNextRequest(op string) { c.arm(op, DropRequest) }

func (c *Conn) arm(op string, f Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = append(c.armed, armedFault{op: op, fault: f})
}
