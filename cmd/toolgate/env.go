package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envAnnotation is the pflag annotation naming a flag's environment variable.
const envAnnotation = "toolgate_env"

// bindEnv ties flag name of fs to environment variable env: the variable sets the flag when the
// command line does not, and the flag's help names it.
func bindEnv(fs *pflag.FlagSet, name, env string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("bindEnv: no flag " + name) // a programming error in a command constructor
	}
	f.Usage += fmt.Sprintf(" [$%s]", env)
	_ = fs.SetAnnotation(name, envAnnotation, []string{env})
}

// applyEnv sets every flag of cmd (local and inherited) that the command line left alone from
// its environment variable, if that is set and not empty. Precedence: flag, then environment, then default.
func applyEnv(cmd *cobra.Command, lookupEnv func(string) (string, bool)) error {
	var firstErr error
	visit := func(f *pflag.Flag) {
		names := f.Annotations[envAnnotation]
		if firstErr != nil || f.Changed || len(names) == 0 {
			return
		}
		value, ok := lookupEnv(names[0])
		if !ok || value == "" {
			return
		}
		if err := f.Value.Set(value); err != nil {
			firstErr = fmt.Errorf("invalid value %q for $%s (--%s): %w", value, names[0], f.Name, err)
			return
		}
		f.Changed = true
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return firstErr
}
