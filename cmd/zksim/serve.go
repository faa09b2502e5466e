package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// serveMain runs "zksim serve": zkmem over ZooKeeper's wire protocol until
// interrupted. It returns the exit status.
func serveMain(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second signal kills at once
	if err := serve(ctx, args, os.Stdout, os.Stderr); err != nil {
		var usage usageError
		switch {
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &usage):
			return 2 // serve printed the problem
		}
		fmt.Fprintln(os.Stderr, "zksim serve:", err)
		return 1
	}
	return 0
}

// usageError is a bad command line or configuration: serve has printed
// the problem (naming the flag), and the usage if the command line was
// malformed. Nothing was served.
type usageError struct{ error }

// serve parses the flags of "zksim serve", listens, prints the address
// ("listening on HOST:PORT"; with -servers N, "server I listening on
// HOST:PORT" for each member I from 1 to N) and the control URL ("control
// on URL") and serves until ctx is done.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zksim serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:2181", "address to serve ZooKeeper's client protocol on")
	controlAddr := fs.String("control", "127.0.0.1:0", `address of the HTTP fault control endpoint ("" for none); loopback only, unless -controlAllowRemote`)
	controlRemote := fs.Bool("controlAllowRemote", false, "let -control listen on an address that is not loopback (anyone who reaches it can expire sessions)")
	tick := fs.Duration("tickTime", 2*time.Second, "tickTime: the unit of the session timeout bounds")
	minTO := fs.Duration("minSessionTimeout", 0, "smallest session timeout granted (default 2*tickTime)")
	maxTO := fs.Duration("maxSessionTimeout", 0, "largest session timeout granted (default 20*tickTime)")
	extended := fs.Bool("extendedTypes", false, "zookeeper.extendedTypesEnabled: allow TTL nodes")
	maxBuf := fs.Int("jute.maxbuffer", jute.DefaultMaxBuffer, "largest request frame in bytes; a longer one closes the connection")
	containers := fs.Duration("containerCheckInterval", 60*time.Second, "znode.container.checkIntervalMs: how often empty containers and expired TTL nodes are deleted")
	reconfig := fs.Bool("reconfigEnabled", false, "reconfigEnabled: reconfig answers Unimplemented, as a standalone server with it on, instead of ReconfigDisabled; with -servers, it is checked as by an ensemble's leader (NoAuth without WRITE on /zookeeper/config), a change itself Unimplemented")
	verbose := fs.Bool("v", false, "log connections, sessions, faults, resets and restarts to stderr")
	auth := registerAuthFlags(fs)
	servers := fs.Int("servers", 1, "members: N > 1 serves an ensemble of N on N ports, -addr's port and the ones after it (free ports if it is 0)")
	observers := fs.Int("observers", 0, "with -servers N, how many of the members, the last ones, are observers: they serve and apply commits but do not vote")
	readOnly := fs.Bool("readonlymode.enabled", false, "readonlymode.enabled: with -servers N, a member cut off from the quorum serves the clients that allow read-only mode")
	words := fs.String("4lw.commands.whitelist", "ruok,srvr,stat,mntr,cons,dump,envi,conf,isro", "four-letter words answered, comma-separated")
	printUsage := func(w io.Writer) {
		fs.SetOutput(w)
		defer fs.SetOutput(stderr)
		fmt.Fprintf(w, "usage: zksim serve [flags]\n\n"+
			"Serves an in-memory ZooKeeper over ZooKeeper's client protocol: any client\n"+
			"(go-zookeeper, Curator, kazoo, zkCli.sh) connects unchanged. Prints the address\n"+
			"it listens on, then the control URL, and serves until interrupted (SIGINT or\n"+
			"SIGTERM). -addr 127.0.0.1:0 picks a free port. A bad flag value exits with\n"+
			"status 2 before anything listens.\n\n"+
			"SASL: with -jaas or -saslUser, clients authenticate with DIGEST-MD5 (kazoo's\n"+
			"sasl_options, Curator and the Java client with a JAAS Client section) as\n"+
			"sasl:NAME, which ACLs of the sasl scheme name; a wrong password is answered\n"+
			"AuthFailed and the connection closes.\n\n"+
			"Ensembles: with -servers N, N members (myid 1 to N, the last leading) share\n"+
			"one history; it prints \"server N listening on ADDR\" for each, then the control\n"+
			"URL. A session reads from the member it connected to, which may lag the\n"+
			"leader; the /servers routes lag, crash, isolate a member and back.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(w, "\ncontrol endpoint (-control; {id} decimal or 0x-hex):\n%s", zkwire.ControlRoutes())
	}
	fs.Usage = func() {} // printUsage runs after Parse: -h to stdout, a bad flag to stderr
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return err
		}
		fmt.Fprintln(stderr)
		printUsage(stderr)
		return usageError{err}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zksim serve: unexpected argument %q (zksim serve takes only flags)\n\n", fs.Arg(0))
		printUsage(stderr)
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	saslUsers, superDigest, err := auth.options()
	if err != nil {
		fmt.Fprintf(stderr, "zksim serve: %v\n", err)
		return usageError{err}
	}
	zkOpts := zkmem.Options{
		TickTime:               *tick,
		MinSessionTimeout:      *minTO,
		MaxSessionTimeout:      *maxTO,
		ExtendedTypes:          *extended,
		ContainerCheckInterval: *containers,
		MaxRequestBytes:        *maxBuf,
		ReconfigEnabled:        *reconfig,
		SASLUsers:              saslUsers,
		SuperDigest:            superDigest,
	}
	err = checkServeFlags(zkOpts, *maxBuf)
	if err == nil {
		err = checkEnsembleFlags(*servers, *observers, *readOnly)
	}
	if err != nil {
		fmt.Fprintf(stderr, "zksim serve: %v\n", err)
		return usageError{err}
	}
	lns, cln, err := listenServe(*addr, *controlAddr, *controlRemote, *servers)
	if err != nil {
		fmt.Fprintf(stderr, "zksim serve: %v\n", err)
		return usageError{err}
	}
	var list []string
	for _, w := range strings.Split(*words, ",") {
		if w = strings.TrimSpace(w); w != "" {
			list = append(list, w)
		}
	}
	wopts := zkwire.Options{
		MaxBuffer:       *maxBuf,
		FourLetterWords: list,
		Logf:            serveLog(*verbose, stderr),
	}
	var srv *zkwire.Server
	errc := make(chan error, len(lns))
	if len(lns) == 1 {
		zk := zkmem.NewServer(zkOpts)
		defer zk.Close()
		wopts.ClientPort = lns[0].Addr().(*net.TCPAddr).Port
		srv = zkwire.New(zk, wopts)
		fmt.Fprintf(stdout, "listening on %s\n", lns[0].Addr())
	} else {
		ens := zkmem.NewEnsemble(len(lns), zkmem.EnsembleOptions{Options: zkOpts, ReadOnly: *readOnly, Observers: *observers})
		defer ens.Close()
		srv = zkwire.NewEnsemble(ens, wopts) // conf reports each member's own port
		for i, ln := range lns {
			fmt.Fprintf(stdout, "server %d listening on %s\n", i+1, ln.Addr())
		}
	}
	if cln != nil {
		fmt.Fprintf(stdout, "control on http://%s\n", cln.Addr())
		go srv.ServeControl(cln)
	}
	for i, ln := range lns {
		if len(lns) == 1 {
			go func() { errc <- srv.Serve(ln) }()
		} else {
			go func() { errc <- srv.ServeMember(i, ln) }()
		}
	}
	select {
	case <-ctx.Done():
		err = nil
	case err = <-errc:
	}
	srv.Close() // and the control endpoint
	if errors.Is(err, zkwire.ErrServerClosed) {
		err = nil
	}
	return err
}
