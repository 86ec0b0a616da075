package slurmclient

// The job records asrpt decodes from a job list: for each REST API version
// the fields its converter (job38, job42, job44) reads, with the generated
// types' names, types and keys, and nothing else. A job list is decoded
// record by record into these (getJobs) rather than into the generated
// job-info structs, whose hundred-odd optional fields cost an allocation
// each for every record of a list of any size; the keys asrpt does not
// read are skipped. jobrecord_test.go checks that every field here is the
// generated struct's field of the same name, type and key.

import (
	api42 "github.com/asrpt/asrpt/slurmclient/internal/api/v0042"
	api44 "github.com/asrpt/asrpt/slurmclient/internal/api/v0044"
)

// jobRecord38 is the part of a v0.0.38 job (V0038JobResponseProperties)
// that job38 reads.
type jobRecord38 struct {
	Account         *string   `json:"account,omitempty"`
	ArrayJobId      *int      `json:"array_job_id,omitempty"`
	ArrayMaxTasks   *int      `json:"array_max_tasks,omitempty"`
	ArrayTaskId     *int      `json:"array_task_id,omitempty"`
	ArrayTaskString *string   `json:"array_task_string,omitempty"`
	Comment         *string   `json:"comment,omitempty"`
	Dependency      *string   `json:"dependency,omitempty"`
	EligibleTime    *int64    `json:"eligible_time,omitempty"`
	ExcludedNodes   *string   `json:"excluded_nodes,omitempty"`
	GresDetail      *[]string `json:"gres_detail,omitempty"`
	HetJobId        *int      `json:"het_job_id,omitempty"`
	HetJobIdSet     *string   `json:"het_job_id_set,omitempty"`
	HetJobOffset    *int      `json:"het_job_offset,omitempty"`
	JobId           *int      `json:"job_id,omitempty"`
	JobState        *string   `json:"job_state,omitempty"`
	Name            *string   `json:"name,omitempty"`
	Nice            *int      `json:"nice,omitempty"`
	Nodes           *string   `json:"nodes,omitempty"`
	Partition       *string   `json:"partition,omitempty"`
	Priority        *int      `json:"priority,omitempty"`
	Qos             *string   `json:"qos,omitempty"`
	Requeue         *bool     `json:"requeue,omitempty"`
	RequiredNodes   *string   `json:"required_nodes,omitempty"`
	StartTime       *int64    `json:"start_time,omitempty"`
	StateReason     *string   `json:"state_reason,omitempty"`
	SubmitTime      *int64    `json:"submit_time,omitempty"`
	TimeLimit       *int64    `json:"time_limit,omitempty"`
	TresPerJob      *string   `json:"tres_per_job,omitempty"`
	TresPerNode     *string   `json:"tres_per_node,omitempty"`
	TresReqStr      *string   `json:"tres_req_str,omitempty"`
	UserName        *string   `json:"user_name,omitempty"`
}

// jobRecord42 is the part of a v0.0.42 job (V0042JobInfo) that job42
// reads.
type jobRecord42 struct {
	Account         *string                       `json:"account,omitempty"`
	ArrayJobId      *api42.V0042Uint32NoValStruct `json:"array_job_id,omitempty"`
	ArrayMaxTasks   *api42.V0042Uint32NoValStruct `json:"array_max_tasks,omitempty"`
	ArrayTaskId     *api42.V0042Uint32NoValStruct `json:"array_task_id,omitempty"`
	ArrayTaskString *string                       `json:"array_task_string,omitempty"`
	Comment         *string                       `json:"comment,omitempty"`
	Dependency      *string                       `json:"dependency,omitempty"`
	EligibleTime    *api42.V0042Uint64NoValStruct `json:"eligible_time,omitempty"`
	ExcludedNodes   *string                       `json:"excluded_nodes,omitempty"`
	GresDetail      *api42.V0042JobInfoGresDetail `json:"gres_detail,omitempty"`
	HetJobId        *api42.V0042Uint32NoValStruct `json:"het_job_id,omitempty"`
	HetJobIdSet     *string                       `json:"het_job_id_set,omitempty"`
	HetJobOffset    *api42.V0042Uint32NoValStruct `json:"het_job_offset,omitempty"`
	Hold            *bool                         `json:"hold,omitempty"`
	JobId           *int32                        `json:"job_id,omitempty"`
	JobState        *api42.V0042JobState          `json:"job_state,omitempty"`
	Name            *string                       `json:"name,omitempty"`
	Nice            *int32                        `json:"nice,omitempty"`
	Nodes           *string                       `json:"nodes,omitempty"`
	Partition       *string                       `json:"partition,omitempty"`
	Priority        *api42.V0042Uint32NoValStruct `json:"priority,omitempty"`
	Qos             *string                       `json:"qos,omitempty"`
	Requeue         *bool                         `json:"requeue,omitempty"`
	RequiredNodes   *string                       `json:"required_nodes,omitempty"`
	StartTime       *api42.V0042Uint64NoValStruct `json:"start_time,omitempty"`
	StateReason     *string                       `json:"state_reason,omitempty"`
	SubmitTime      *api42.V0042Uint64NoValStruct `json:"submit_time,omitempty"`
	TimeLimit       *api42.V0042Uint32NoValStruct `json:"time_limit,omitempty"`
	TresPerJob      *string                       `json:"tres_per_job,omitempty"`
	TresPerNode     *string                       `json:"tres_per_node,omitempty"`
	TresReqStr      *string                       `json:"tres_req_str,omitempty"`
	UserName        *string                       `json:"user_name,omitempty"`
}

// jobRecord44 is the part of a v0.0.44 job (V0044JobInfo) that job44
// reads.
type jobRecord44 struct {
	Account         *string                       `json:"account,omitempty"`
	ArrayJobId      *api44.V0044Uint32NoValStruct `json:"array_job_id,omitempty"`
	ArrayMaxTasks   *api44.V0044Uint32NoValStruct `json:"array_max_tasks,omitempty"`
	ArrayTaskId     *api44.V0044Uint32NoValStruct `json:"array_task_id,omitempty"`
	ArrayTaskString *string                       `json:"array_task_string,omitempty"`
	Comment         *string                       `json:"comment,omitempty"`
	Dependency      *string                       `json:"dependency,omitempty"`
	EligibleTime    *api44.V0044Uint64NoValStruct `json:"eligible_time,omitempty"`
	ExcludedNodes   *string                       `json:"excluded_nodes,omitempty"`
	GresDetail      *api44.V0044JobInfoGresDetail `json:"gres_detail,omitempty"`
	HetJobId        *api44.V0044Uint32NoValStruct `json:"het_job_id,omitempty"`
	HetJobIdSet     *string                       `json:"het_job_id_set,omitempty"`
	HetJobOffset    *api44.V0044Uint32NoValStruct `json:"het_job_offset,omitempty"`
	Hold            *bool                         `json:"hold,omitempty"`
	JobId           *int32                        `json:"job_id,omitempty"`
	JobState        *[]api44.V0044JobInfoJobState `json:"job_state,omitempty"`
	Name            *string                       `json:"name,omitempty"`
	Nice            *int32                        `json:"nice,omitempty"`
	Nodes           *string                       `json:"nodes,omitempty"`
	Partition       *string                       `json:"partition,omitempty"`
	Priority        *api44.V0044Uint32NoValStruct `json:"priority,omitempty"`
	Qos             *string                       `json:"qos,omitempty"`
	Requeue         *bool                         `json:"requeue,omitempty"`
	RequiredNodes   *string                       `json:"required_nodes,omitempty"`
	StartTime       *api44.V0044Uint64NoValStruct `json:"start_time,omitempty"`
	StateReason     *string                       `json:"state_reason,omitempty"`
	SubmitTime      *api44.V0044Uint64NoValStruct `json:"submit_time,omitempty"`
	TimeLimit       *api44.V0044Uint32NoValStruct `json:"time_limit,omitempty"`
	TresPerJob      *string                       `json:"tres_per_job,omitempty"`
	TresPerNode     *string                       `json:"tres_per_node,omitempty"`
	TresReqStr      *string                       `json:"tres_req_str,omitempty"`
	UserName        *string                       `json:"user_name,omitempty"`
}
