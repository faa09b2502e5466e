package zkserver

import (
	"fmt"
	"time"
)

// Option changes how Start launches a server.
type Option func(*config)

type config struct {
	host         string // clientPortAddress
	startTimeout time.Duration
	heap         string
	cfgLines     []string // extra zoo.cfg lines, "key=value"
	sysProps     []string // extra JVM system properties, "-Dkey=value"
	saslUsers    map[string]string
	direct       bool // StartEnsemble: members reach each other directly (WithDirectLinks)
}

func defaultConfig() config {
	return config{host: "127.0.0.1", startTimeout: 60 * time.Second, heap: "256m"}
}

func buildConfig(opts []Option) config {
	cfg := defaultConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg
}

// WithDirectLinks makes StartEnsemble's members reach each other at their
// own quorum and election ports, every member configured with the same
// server lines, instead of through the links Isolate and Lag control. An
// ensemble with reconfigEnabled=true needs it: its members adopt the
// leader's configuration, in which a member's own election address is the
// leader's link to it, and binding its election listener there fails (the
// member exits with status 14 at startup). Isolate, Heal, Lag and CatchUp
// panic on such an ensemble. Start ignores it.
func WithDirectLinks() Option {
	return func(c *config) { c.direct = true }
}

// WithStartTimeout bounds the wait for the server to serve requests
// (default 60s, generous for a loaded CI machine).
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) { c.startTimeout = d }
}

// WithConfig adds a line key=value to the server's zoo.cfg, after the
// defaults, so it overrides them (for instance "maxSessionTimeout").
func WithConfig(key, value string) Option {
	return func(c *config) { c.cfgLines = append(c.cfgLines, fmt.Sprintf("%s=%s", key, value)) }
}

// WithSystemProperty passes -Dkey=value to the server's JVM, after the
// defaults, so it overrides them (for instance "zookeeper.forceSync", "no").
func WithSystemProperty(key, value string) Option {
	return func(c *config) { c.sysProps = append(c.sysProps, fmt.Sprintf("-D%s=%s", key, value)) }
}

// WithClientPortAddress makes the server listen on host, a loopback
// address, instead of 127.0.0.1 (clientPortAddress). With an IPv6 address
// ("::1") the JVM runs without java.net.preferIPv4Stack, and only IPv6
// clients reach the server: tests of what a client from ::1 may do use
// such a server beside one on 127.0.0.1 (a ZooKeeper server listens on one
// address, and a wildcard one would take clients from the network).
func WithClientPortAddress(host string) Option {
	return func(c *config) { c.host = host }
}

// WithHeap sets the JVM's maximum heap, as for -Xmx (default "256m").
func WithHeap(size string) Option {
	return func(c *config) { c.heap = size }
}

// WithSASLUsers makes the server authenticate SASL DIGEST-MD5 clients as
// users (name to password), configured as a real deployment does it: a
// JAAS file with a Server section whose DigestLoginModule lists
// user_NAME="PASSWORD" (java.security.auth.login.config), and the SASL
// authentication provider (zookeeper.authProvider.1), which the "sasl"
// ACL scheme needs. A client authenticated as NAME has the identity
// sasl:NAME. A name must be a JAAS word: letters, digits and ._$*-; Start
// fails on another.
func WithSASLUsers(users map[string]string) Option {
	return func(c *config) { c.saslUsers = users }
}

// WithSuperDigest sets zookeeper.DigestAuthenticationProvider.superDigest,
// "super:" and the base64 SHA-1 of "super:PASSWORD" (zksim.DigestID
// renders it): a client that adds the digest auth "super:PASSWORD" passes
// every ACL check.
func WithSuperDigest(digest string) Option {
	return WithSystemProperty("zookeeper.DigestAuthenticationProvider.superDigest", digest)
}
