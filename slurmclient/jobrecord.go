package slurmclient

// The job records asrpt decodes from a job list: for each REST API version
// the fields its converter (job38 here; job42 and job44 in the generated
// v0042.go and v0044.go) reads, with the generated
// types' names, types and keys, and nothing else. A job list is decoded
// record by record into these (getJobs) rather than into the generated
// job-info structs, whose hundred-odd optional fields cost an allocation
// each for every record of a list of any size; the keys asrpt does not
// read are skipped. jobrecord_test.go checks that every field here is the
// generated struct's field of the same name, type and key.

// jobRecord38 is the part of a v0.0.38 job (V0038JobResponseProperties)
// that job38 reads.
type jobRecord38 struct {
	Account                 *string   `json:"account,omitempty"`
	ArrayJobId              *int      `json:"array_job_id,omitempty"`
	ArrayMaxTasks           *int      `json:"array_max_tasks,omitempty"`
	ArrayTaskId             *int      `json:"array_task_id,omitempty"`
	ArrayTaskString         *string   `json:"array_task_string,omitempty"`
	Comment                 *string   `json:"comment,omitempty"`
	CurrentWorkingDirectory *string   `json:"current_working_directory,omitempty"`
	Dependency              *string   `json:"dependency,omitempty"`
	EligibleTime            *int64    `json:"eligible_time,omitempty"`
	ExcludedNodes           *string   `json:"excluded_nodes,omitempty"`
	GresDetail              *[]string `json:"gres_detail,omitempty"`
	HetJobId                *int      `json:"het_job_id,omitempty"`
	HetJobIdSet             *string   `json:"het_job_id_set,omitempty"`
	HetJobOffset            *int      `json:"het_job_offset,omitempty"`
	JobId                   *int      `json:"job_id,omitempty"`
	JobState                *string   `json:"job_state,omitempty"`
	Name                    *string   `json:"name,omitempty"`
	Nice                    *int      `json:"nice,omitempty"`
	Nodes                   *string   `json:"nodes,omitempty"`
	Partition               *string   `json:"partition,omitempty"`
	Priority                *int      `json:"priority,omitempty"`
	Qos                     *string   `json:"qos,omitempty"`
	Requeue                 *bool     `json:"requeue,omitempty"`
	RequiredNodes           *string   `json:"required_nodes,omitempty"`
	StartTime               *int64    `json:"start_time,omitempty"`
	StateReason             *string   `json:"state_reason,omitempty"`
	SubmitTime              *int64    `json:"submit_time,omitempty"`
	TimeLimit               *int64    `json:"time_limit,omitempty"`
	TresPerJob              *string   `json:"tres_per_job,omitempty"`
	TresPerNode             *string   `json:"tres_per_node,omitempty"`
	TresReqStr              *string   `json:"tres_req_str,omitempty"`
	UserName                *string   `json:"user_name,omitempty"`
}
