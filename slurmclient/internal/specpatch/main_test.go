package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPatch(t *testing.T) {
	in := `{"paths":{"/a":{"get":{},"bogus_key":{}}},"components":{"schemas":{
	  "x_job":{"properties":{"o":{"type":"boolean","default":"false"},"p":{"type":"boolean","default":1}}},
	  "v_meta":{"properties":{"Slurm":{"properties":{"version":{"properties":{"major":{"type":"string"}}}}}}},
	  "v_uint32_no_val_struct":{"properties":{"number":{"type":"integer","format":"int32"}}}}}}`
	out, notes, err := Patch([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 5 {
		t.Errorf("notes %q: want 5 repairs", notes)
	}
	var d map[string]any
	json.Unmarshal(out, &d)
	s := string(out)
	if strings.Contains(s, "bogus_key") || dig(d, "components", "schemas", "x_job", "properties", "o")["default"] != false ||
		dig(d, "components", "schemas", "x_job", "properties", "p")["default"] != true ||
		dig(d, "components", "schemas", "v_meta", "properties", "Slurm", "properties", "version", "properties", "major")["type"] != "integer" ||
		dig(d, "components", "schemas", "v_uint32_no_val_struct", "properties", "number")["format"] != "int64" {
		t.Errorf("not repaired:\n%s", s)
	}
	// A valid document passes unchanged.
	if _, notes, _ := Patch([]byte(`{"paths":{"/a":{"get":{}}}}`)); len(notes) != 0 {
		t.Errorf("valid document changed: %q", notes)
	}
	if _, _, err := Patch([]byte(`[1]`)); err == nil {
		t.Error("non-object accepted")
	}
}
