package slurmclient

// The adapters of REST API v0.0.42 and later are written from one template
// (internal/adaptergen/adapter.go.tmpl); TestGeneratedCodeUpToDate checks
// the committed files are what it makes. v0.0.38 (Slurm 22.05) has its own
// hand-written adapter, v0038.go: its job description differs in shape.
//
// -submitline marks a version whose job list reports submit_line (v0.0.44;
// v0.0.42's and v0.0.38's do not): a job's Command (job.CommandKey) hashes
// the working directory and submit line there, and is 0 elsewhere (a
// directory alone is no command), in the job list and in accounting alike,
// so that a pending job gets the key its accounting record will have.

//go:generate go run ./internal/adaptergen -n 42 -releases 24.11–26.05 -jobstate api.V0042JobState -o v0042.go
//go:generate go run ./internal/adaptergen -n 44 -releases 25.11–27.05 -jobstate []api.V0044JobInfoJobState -submitline -o v0044.go
