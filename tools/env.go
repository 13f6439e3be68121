package tools

import "slices"

// MinimalEnv returns the environment a [Command] program gets, in the form
// of exec.Cmd.Env, for integrations that start programs of their own. It
// holds the default variables and those named in inherit, taken from the
// current process if set. Then come the variables in set, which win. It is
// never nil.
// Names are not checked: the caller rejects names that are empty or hold
// "=" or NUL.
func MinimalEnv(set map[string]string, inherit []string) []string {
	return commandEnv{inherit: slices.Concat(defaultEnv, inherit), set: set}.environ()
}
