package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPasswordHintNamesTheSource(t *testing.T) {
	const env = "WARREN_HINT_TEST_PASSWORD"
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(env, "") // restored after the test
	os.Unsetenv(env)
	t.Setenv(LocalPasswordEnv, "")
	os.Unsetenv(LocalPasswordEnv)
	tests := []struct {
		name string
		ctx  Context
		set  bool
		want string
	}{
		{"variable unset", Context{PasswordEnv: env}, false, env + " (password_env) is not set"},
		{"variable set", Context{PasswordEnv: env}, true, "the password in " + env + " (password_env)"},
		{"variable unset, file given", Context{PasswordEnv: env, PasswordFile: file}, false, "the password in " + file + " (password_file)"},
		{"file", Context{PasswordFile: file}, false, "the password in " + file + " (password_file)"},
		{"nothing", Context{}, false, "names no password source and WARREN_PASSWORD is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.set {
				t.Setenv(env, "s3cret")
			} else {
				os.Unsetenv(env)
			}
			got := tt.ctx.PasswordHint()
			if !strings.Contains(got, tt.want) || strings.Contains(got, "s3cret") {
				t.Fatalf("hint %q, want it to contain %q and no secret", got, tt.want)
			}
		})
	}
}

// A context that names no password source takes warren's own variable,
// WARREN_PASSWORD, which no file chose: a project's warren.toml, which
// may not name one, can log in.
func TestAContextWithoutAPasswordSourceTakesWarrensVariable(t *testing.T) {
	t.Setenv(LocalPasswordEnv, "from-warren-password")
	if got, err := (&Context{}).Password(); err != nil || got != "from-warren-password" {
		t.Fatalf("password %q (%v), want WARREN_PASSWORD's", got, err)
	}
	t.Setenv("WARREN_OTHER_TEST_PW", "other")
	if got, _ := (&Context{PasswordEnv: "WARREN_OTHER_TEST_PW"}).Password(); got != "other" {
		t.Errorf("a named source: password %q, want its value", got)
	}
}
