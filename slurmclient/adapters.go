package slurmclient

// The adapters of REST API v0.0.42 and later are written from one template
// (internal/adaptergen/adapter.go.tmpl); TestGeneratedCodeUpToDate checks
// the committed files are what it makes. v0.0.38 (Slurm 22.05) has its own
// hand-written adapter, v0038.go: its job description differs in shape.

//go:generate go run ./internal/adaptergen -n 42 -releases 24.11–26.05 -jobstate api.V0042JobState -o v0042.go
//go:generate go run ./internal/adaptergen -n 44 -releases 25.11–27.05 -jobstate []api.V0044JobInfoJobState -o v0044.go
