package toolbash

import (
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestDurationDecodesFromYAML(t *testing.T) {
	t.Parallel()
	var cfg struct {
		Timeout Duration `yaml:"timeout"`
	}
	if err := yaml.Unmarshal([]byte("timeout: 2m30s\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout.D() != 150*time.Second {
		t.Fatalf("got %v", cfg.Timeout.D())
	}
	if err := yaml.Unmarshal([]byte("timeout: soon\n"), &cfg); err == nil {
		t.Fatal("want an error for a malformed duration")
	}
	if b, _ := Duration(3 * time.Second).MarshalText(); string(b) != "3s" {
		t.Fatal(string(b))
	}
}
