//! gRPC server reflection (v1) lists the services, without credentials, so standard tools
//! (grpcurl, any language's client) work.

use chipledger_tests::TestServer;
use futures::StreamExt;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
use tonic_reflection::pb::v1::ServerReflectionRequest;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_v1_lists_the_chipledger_services_health_and_reflection() -> anyhow::Result<()> {
    let server = TestServer::start("reflection").await?;
    let mut client = ServerReflectionClient::new(server.channel().await?);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut replies = client.server_reflection_info(futures::stream::iter([request])).await?.into_inner();
    let reply = replies.next().await.ok_or_else(|| anyhow::anyhow!("no reflection reply"))??;
    let Some(MessageResponse::ListServicesResponse(list)) = reply.message_response else {
        anyhow::bail!("not a service list: {reply:?}");
    };
    let mut names: Vec<String> = list.service.into_iter().map(|service| service.name).collect();
    names.sort();
    for expected in [
        "chipledger.v1.AuditService",
        "chipledger.v1.CageService",
        "chipledger.v1.LedgerService",
        "chipledger.v1.TableService",
        "grpc.health.v1.Health",
    ] {
        assert!(names.iter().any(|name| name == expected), "{expected} missing from {names:?}");
    }

    // The descriptors are served too: a client can discover BuyIn's request type.
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol("chipledger.v1.TableService".into())),
    };
    let mut replies = client.server_reflection_info(futures::stream::iter([request])).await?.into_inner();
    let reply = replies.next().await.ok_or_else(|| anyhow::anyhow!("no reflection reply"))??;
    let Some(MessageResponse::FileDescriptorResponse(files)) = reply.message_response else {
        anyhow::bail!("not a file descriptor response: {reply:?}");
    };
    assert!(!files.file_descriptor_proto.is_empty());
    server.stop().await
}
