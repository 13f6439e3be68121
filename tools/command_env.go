package tools

import (
	"maps"
	"os"
	"slices"
	"strings"
)

// defaultEnv names the variables a [Command] program gets from the current
// process, if they are set. They are what programs need to find other
// programs, files, the locale and the time zone. None grants access to
// anything. The Windows names are what programs there need to start at all.
var defaultEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	"SYSTEMROOT", "TEMP", "TMP", "USERPROFILE", "PATHEXT",
}

// commandEnv is the environment of a Command program: variables passed
// through from the current process by name, then variables set explicitly,
// which win.
type commandEnv struct {
	inherit []string          // names, defaultEnv first
	set     map[string]string // Options.Env
}

func newCommandEnv(name string, o Options) (commandEnv, error) {
	for _, n := range o.InheritEnv {
		if err := checkEnvName(name, n); err != nil {
			return commandEnv{}, err
		}
	}
	for n, v := range o.Env {
		if err := checkEnvName(name, n); err != nil {
			return commandEnv{}, err
		}
		if strings.ContainsRune(v, 0) {
			return commandEnv{}, invalid(name, "environment variable %q: value contains a NUL byte", n)
		}
	}
	return commandEnv{inherit: slices.Concat(defaultEnv, o.InheritEnv), set: o.Env}, nil
}

func checkEnvName(tool, n string) error {
	if n == "" || strings.ContainsAny(n, "=\x00") {
		return invalid(tool, "environment variable name %q: must be non-empty, without = or NUL", n)
	}
	return nil
}

// environ returns the program's environment as exec.Cmd.Env wants it: never
// nil, since a nil Env would hand the program the whole environment.
func (e commandEnv) environ() []string {
	vars := make(map[string]string, len(e.inherit)+len(e.set))
	for _, n := range e.inherit {
		if v, ok := os.LookupEnv(n); ok {
			vars[n] = v
		}
	}
	maps.Copy(vars, e.set)
	env := make([]string, 0, len(vars))
	for _, n := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, n+"="+vars[n])
	}
	return env
}
