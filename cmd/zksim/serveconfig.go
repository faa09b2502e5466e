package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"strconv"
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

// listenServe listens on the -addr address, and the ports after it for
// the other members of an ensemble (see listenMembers), and on the
// -control address (control "" for none), and refuses a control address that is not loopback unless
// allowRemote (-controlAllowRemote): the control endpoint expires sessions
// for whoever reaches it. On error it names the flag and closes what it
// opened.
func listenServe(addr, control string, allowRemote bool, members int) (lns []net.Listener, cln net.Listener, err error) {
	lns, err = listenMembers(addr, members)
	if err != nil {
		return nil, nil, err
	}
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	if control == "" {
		return lns, nil, nil
	}
	cln, err = net.Listen("tcp", control)
	if err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("-control %s: %w", control, err)
	}
	if ip := cln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() && !allowRemote {
		closeAll()
		cln.Close()
		return nil, nil, fmt.Errorf("-control %s: listens on %v, not a loopback address: anyone who reaches it can expire sessions; add -controlAllowRemote to allow it", control, ip)
	}
	return lns, cln, nil
}

// listenMembers listens on addr for the first of n members, and for each
// next one on the port after the previous one's, or on a free port if
// addr's port is 0.
func listenMembers(addr string, n int) ([]net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-addr %s: %w", addr, err)
	}
	lns := []net.Listener{ln}
	first := ln.Addr().(*net.TCPAddr)
	host, port, _ := net.SplitHostPort(addr)
	for i := 1; i < n; i++ {
		next := net.JoinHostPort(host, "0")
		if port != "0" {
			next = net.JoinHostPort(host, strconv.Itoa(first.Port+i))
		}
		ln, err := net.Listen("tcp", next)
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return nil, fmt.Errorf("-addr %s: member %d of -servers %d: %w", addr, i+1, n, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// maxServers bounds -servers: ZooKeeper's server ids go up to 254.
const maxServers = 254

// checkEnsembleFlags checks -servers, -observers and
// -readonlymode.enabled.
func checkEnsembleFlags(servers, observers int, readOnly bool) error {
	if servers < 1 || servers > maxServers {
		return fmt.Errorf("-servers %d: the number of members must be between 1 and %d", servers, maxServers)
	}
	if observers < 0 || observers > 0 && observers >= servers {
		return fmt.Errorf("-observers %d: of -servers %d, at least one member must vote", observers, servers)
	}
	if readOnly && servers == 1 {
		return fmt.Errorf("-readonlymode.enabled without -servers N (N > 1): a standalone server has no quorum to lose")
	}
	return nil
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
