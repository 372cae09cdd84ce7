package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/services/tokenmeter"
)

// tokensReport is the --json output of `harness tokens`.
type tokensReport struct {
	Estimator string `json:"estimator"`
	Tokens    int    `json:"tokens"`
	Bytes     int    `json:"bytes"`
}

// tokensCommand builds `harness tokens`.
func tokensCommand(env *Env) *cobra.Command {
	var estimator, tokenizer string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tokens [FILE|-]",
		Short: "Count the tokens of a file or of stdin",
		Long: "tokens prints the token count of FILE, or of stdin when FILE is - or absent.\n" +
			"--estimator picks how text is priced: heuristic (default; calibrated against DeepSeek-V3),\n" +
			"bytes (ceil(bytes/4)), o200k or cl100k (exact OpenAI encodings, offline), or\n" +
			"tokenizer-json (exact counts from the HuggingFace tokenizer.json named by --tokenizer;\n" +
			"--tokenizer alone implies it). --json prints {\"estimator\",\"tokens\",\"bytes\"}.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := estimator
			if name == "" {
				name = "heuristic"
				if tokenizer != "" {
					name = "tokenizer-json"
				}
			}
			if tokenizer != "" && name != "tokenizer-json" {
				return UsageError(fmt.Errorf("--tokenizer needs --estimator tokenizer-json (got %q)", name))
			}
			if name == "tokenizer-json" && tokenizer == "" {
				return UsageError(errors.New("--estimator tokenizer-json needs --tokenizer FILE"))
			}
			est, err := tokenmeter.NewEstimator(name, tokenizer)
			if err != nil {
				if name == "tokenizer-json" {
					return Failure(err)
				}
				return UsageError(err)
			}
			text, err := readInput(env, args)
			if err != nil {
				return Failure(err)
			}
			n := est.Count(string(text))
			if asJSON {
				return json.NewEncoder(env.Stdout).Encode(tokensReport{Estimator: est.Name(), Tokens: n, Bytes: len(text)})
			}
			_, err = fmt.Fprintln(env.Stdout, n)
			return err
		},
	}
	cmd.Flags().StringVar(&estimator, "estimator", "", "heuristic, bytes, o200k, cl100k or tokenizer-json (default heuristic)")
	cmd.Flags().StringVar(&tokenizer, "tokenizer", "", "HuggingFace tokenizer.json for --estimator tokenizer-json")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"estimator","tokens","bytes"}`)
	return cmd
}

// readInput reads the named file, or stdin for "-" or no argument.
func readInput(env *Env, args []string) ([]byte, error) {
	if len(args) == 0 || args[0] == "-" {
		return io.ReadAll(env.Stdin)
	}
	return os.ReadFile(args[0])
}
