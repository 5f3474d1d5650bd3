//! `ApprovalService`: a second person's approval, signed by the ledger.

use super::*;

#[tonic::async_trait]
impl ApprovalService for Services {
    async fn approve(&self, request: Request<pb::ApproveRequest>) -> Result<Response<pb::ApprovalToken>, Status> {
        let approver = principal(&request)?;
        Ok(Response::new(self.ledger.approve(&approver, request.get_ref()).await?))
    }
}
