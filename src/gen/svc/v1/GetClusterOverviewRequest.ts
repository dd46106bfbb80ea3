// Original file: proto/svc/v1/admin.proto


export interface GetClusterOverviewRequest {
}

export interface GetClusterOverviewRequest__Output {
}
