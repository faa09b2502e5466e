package property_test

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// ciChecks is the number of checks (random runs) each property gets unless
// -rapid.checks or RAPID_CHECKS says otherwise: 1,000, the CI budget of a
// recipe family. rapid's own default is 100.
const ciChecks = "1000"

// TestMain raises rapid's default number of checks to the CI budget and
// makes sure no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	flag.Parse()
	for name, env := range map[string]string{"rapid.steps": "RAPID_STEPS", "rapid.shrinktime": "RAPID_SHRINKTIME", "rapid.checks": "RAPID_CHECKS", "rapid.seed": "RAPID_SEED"} {
		userSet[name] = isSet(name, env)
	}
	setDefault("rapid.checks", "RAPID_CHECKS", ciChecks)
	goleak.VerifyTestMain(m)
}

// userSet records which rapid flags the command line or the environment
// set; the tests leave those alone.
var userSet = map[string]bool{}

// isSet reports whether flag name was set on the command line or by the
// environment variable env.
func isSet(name, env string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, ok := os.LookupEnv(env)
	return set || ok
}

// setDefault sets flag name to value unless the command line or the
// environment variable env set it.
func setDefault(name, env, value string) {
	if isSet(name, env) {
		return
	}
	if err := flag.Set(name, value); err != nil {
		panic(err)
	}
}
