package zktest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
)

// FastOptions returns the settings the conformance suite and the
// differential test run both backends with: tickTime 100ms, so that the
// server grants session timeouts within [200ms, 2s]; TTL nodes enabled;
// empty containers and expired TTL nodes reaped every 100ms. The rest are
// ZooKeeper's defaults. They are also the settings zkserver gives a server
// by default.
func FastOptions() zkmem.Options {
	return zkmem.Options{
		TickTime:               100 * time.Millisecond,
		ExtendedTypes:          true,
		ContainerCheckInterval: 100 * time.Millisecond,
	}
}

// WithDefaults returns opts with every zero field set to its default, as
// zkmem fills them in (ZooKeeper's defaults: tickTime 2s, session timeouts
// within [2, 20] ticks, containers checked every 60s, jute.maxbuffer
// 1,048,575 bytes). zkmem is asked, so the two can never disagree. It
// panics, as zkmem.NewServer does, on options opts.Validate refuses.
func WithDefaults(opts zkmem.Options) zkmem.Options {
	srv := zkmem.NewServer(opts)
	defer srv.Close()
	return srv.Options()
}

// ServerOptions returns the zkserver options that start a real ZooKeeper
// with the settings opts describe (defaults filled in as by
// [WithDefaults]): zoo.cfg's tickTime, minSessionTimeout,
// maxSessionTimeout and reconfigEnabled, and the system properties
// zookeeper.extendedTypesEnabled, znode.container.checkIntervalMs and
// jute.maxbuffer; with SASLUsers, a JAAS file and the SASL authentication
// provider (zkserver.WithSASLUsers); with SuperDigest,
// zookeeper.DigestAuthenticationProvider.superDigest. ZooKeeper counts
// time in whole milliseconds: a duration that is not one is an error, and
// so is what opts.Validate refuses.
func ServerOptions(opts zkmem.Options) ([]zkserver.Option, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	f := WithDefaults(opts)
	tick, err := millis("TickTime", f.TickTime)
	if err != nil {
		return nil, err
	}
	minTimeout, err := millis("MinSessionTimeout", f.MinSessionTimeout)
	if err != nil {
		return nil, err
	}
	maxTimeout, err := millis("MaxSessionTimeout", f.MaxSessionTimeout)
	if err != nil {
		return nil, err
	}
	reap, err := millis("ContainerCheckInterval", f.ContainerCheckInterval)
	if err != nil {
		return nil, err
	}
	out := []zkserver.Option{
		zkserver.WithConfig("tickTime", tick),
		zkserver.WithConfig("minSessionTimeout", minTimeout),
		zkserver.WithConfig("maxSessionTimeout", maxTimeout),
		zkserver.WithConfig("reconfigEnabled", strconv.FormatBool(f.ReconfigEnabled)),
		zkserver.WithSystemProperty("zookeeper.extendedTypesEnabled", strconv.FormatBool(f.ExtendedTypes)),
		zkserver.WithSystemProperty("znode.container.checkIntervalMs", reap),
		zkserver.WithSystemProperty("jute.maxbuffer", strconv.Itoa(f.MaxRequestBytes)),
	}
	if f.SASLUsers != nil {
		out = append(out, zkserver.WithSASLUsers(f.SASLUsers))
	}
	if f.SuperDigest != "" {
		out = append(out, zkserver.WithSuperDigest(f.SuperDigest))
	}
	return out, nil
}

// millis renders d as a whole number of milliseconds for the server's
// configuration.
func millis(field string, d time.Duration) (string, error) {
	if d%time.Millisecond != 0 {
		return "", fmt.Errorf("zktest: %s %v is not a whole number of milliseconds, which a real ZooKeeper cannot be configured with", field, d)
	}
	return strconv.FormatInt(d.Milliseconds(), 10), nil
}
