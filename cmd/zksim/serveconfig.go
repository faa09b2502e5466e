package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// checkServeFlags reports the first flag of "zksim serve" whose value a
// server cannot run with, naming the flag: a tickTime that is not a
// positive whole number of milliseconds (ZooKeeper counts time in them, and
// the handshake carries the session timeout in them), a negative or
// fractional session timeout bound, a minSessionTimeout above the
// maxSessionTimeout (defaults included: a real server refuses that), a
// session timeout bound the handshake cannot carry, a containerCheckInterval
// or jute.maxbuffer that is not positive.
func checkServeFlags(o zkmem.Options, maxBuf int) error {
	if err := wholeMillis("tickTime", o.TickTime, false); err != nil {
		return err
	}
	if err := wholeMillis("minSessionTimeout", o.MinSessionTimeout, true); err != nil {
		return err
	}
	if err := wholeMillis("maxSessionTimeout", o.MaxSessionTimeout, true); err != nil {
		return err
	}
	if err := wholeMillis("containerCheckInterval", o.ContainerCheckInterval, false); err != nil {
		return err
	}
	if maxBuf <= 0 {
		return fmt.Errorf("-jute.maxbuffer %d: must be a positive number of bytes", maxBuf)
	}
	minTO, maxTO := o.MinSessionTimeout, o.MaxSessionTimeout
	if minTO == 0 {
		minTO = 2 * o.TickTime
	}
	if maxTO == 0 {
		maxTO = 20 * o.TickTime
	}
	if minTO > maxTO {
		return fmt.Errorf("-minSessionTimeout %v is larger than -maxSessionTimeout %v (defaults 2 and 20 ticks): a real ZooKeeper refuses that configuration", minTO, maxTO)
	}
	if maxTO > math.MaxInt32*time.Millisecond || maxTO < 0 {
		return fmt.Errorf("-maxSessionTimeout %v (default 20 ticks): the handshake carries a session timeout as at most %dms", maxTO, math.MaxInt32)
	}
	return o.Validate() // what zkmem refuses beyond this
}

// wholeMillis checks the duration flag name: a positive (or, if zeroOK,
// zero) whole number of milliseconds.
func wholeMillis(name string, d time.Duration, zeroOK bool) error {
	switch {
	case d < 0 || d == 0 && !zeroOK:
		return fmt.Errorf("-%s %v: must be positive", name, d)
	case d%time.Millisecond != 0:
		return fmt.Errorf("-%s %v: must be a whole number of milliseconds, as ZooKeeper counts it", name, d)
	}
	return nil
}

// listenServe listens on the -addr and -control addresses (control "" for
// none), and refuses a control address that is not loopback unless
// allowRemote (-controlAllowRemote): the control endpoint expires sessions
// for whoever reaches it. On error it names the flag and closes what it
// opened.
func listenServe(addr, control string, allowRemote bool) (ln, cln net.Listener, err error) {
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("-addr %s: %w", addr, err)
	}
	if control == "" {
		return ln, nil, nil
	}
	cln, err = net.Listen("tcp", control)
	if err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("-control %s: %w", control, err)
	}
	if ip := cln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() && !allowRemote {
		ln.Close()
		cln.Close()
		return nil, nil, fmt.Errorf("-control %s: listens on %v, not a loopback address: anyone who reaches it can expire sessions; add -controlAllowRemote to allow it", control, ip)
	}
	return ln, cln, nil
}

// serveLog is zkwire's Logf for -v: a line on w per event, timestamped;
// nil without -v.
func serveLog(verbose bool, w io.Writer) func(string, ...any) {
	if !verbose {
		return nil
	}
	l := log.New(w, "", log.Ltime|log.Lmicroseconds)
	return l.Printf
}
