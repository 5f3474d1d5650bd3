//! Dual control from the command line. A second person obtains an approval token with their own
//! credentials (`chipledger --token <theirs> approve ...`, the same command and command id the
//! caller will send); the caller passes it with `--approval <token>`. The demo and the imports
//! hold second persons' credentials ([`Approvers`]) and ask them for each command that needs
//! one. Either way an empty approver, signer or supervisor field is filled with the approver the
//! token names, for a field whose role table (`chipledger_proto::APPROVAL_RULES`) allows
//! that approver's role; the server checks everything again.

use anyhow::{Context, bail};
use chipledger_proto::approval::{self, DEV_APPROVERS};
use chipledger_proto::v1 as pb;
use chipledger_proto::{ApprovalRule, approval_rule, role_name};
use clap::Args;
use pb::command::Command as Wire;
use tonic::{Code, Status};

use crate::connect::{Client, ServerArgs, describe_status};
use crate::send::Import;

/// `approver` approves `command` as sent under `command_id` and `property_id` (its header's
/// other fields as they are).
pub async fn approve(
    approver: &mut Client,
    command: &Wire,
    command_id: &str,
    property_id: &str,
    import: Option<&Import>,
    ttl_seconds: u32,
) -> Result<pb::ApprovalToken, Status> {
    let mut probe = command.clone();
    let header = probe.header_mut().get_or_insert_with(Default::default);
    header.command_id = command_id.to_string();
    header.property_id = property_id.to_string();
    // An import is approved with its actor and time (a batch entry with its batch's): they are
    // in the digest.
    if let Some(import) = import {
        import.stamp(header);
    }
    let request = pb::ApproveRequest { command: Some(pb::Command { command: Some(probe) }), ttl_seconds };
    approver.approval.approve(request).await.map(tonic::Response::into_inner)
}

fn allows(rule: &ApprovalRule, approver_role: &str) -> bool {
    rule.roles.iter().any(|role| role_name(role) == approver_role)
}

/// Adds `tokens` to the command's header and names their approvers ([`name_approvers`]).
pub fn attach(command: &mut Wire, tokens: &[String]) -> anyhow::Result<()> {
    name_approvers(command, tokens)?;
    command.header_mut().get_or_insert_with(Default::default).approvals.extend(tokens.iter().cloned());
    Ok(())
}

/// Names the approvers of `tokens` in the command's empty second-person fields (a token's
/// approver fills the first empty field its role may fill). A token no field can take is an
/// error here rather than a refusal from the server.
pub fn name_approvers(command: &mut Wire, tokens: &[String]) -> anyhow::Result<()> {
    if tokens.is_empty() {
        return Ok(());
    }
    let rpc = command.rpc();
    let fields = command.approval_fields();
    let mut empty: Vec<&'static str> = fields.iter().filter(|(_, named)| named.is_none()).map(|(field, _)| *field).collect();
    let named: Vec<String> = fields.iter().filter_map(|(_, named)| named.map(str::to_string)).collect();
    let mut assignments = Vec::new();
    for token in tokens {
        let claims = approval::read_claims(token).context("--approval: not an approval token (from `chipledger approve`)")?;
        if named.contains(&claims.approver_id) {
            continue; // the field already names this approver
        }
        let slot = empty.iter().position(|field| approval_rule(rpc, field).is_some_and(|rule| allows(rule, &claims.approver_role)));
        let Some(slot) = slot else {
            bail!(
                "--approval of {} ({}) fits no empty approver field of {rpc}",
                claims.approver_id,
                claims.approver_role
            );
        };
        assignments.push((empty.remove(slot), claims.approver_id));
    }
    for (field, approver_id) in assignments {
        command.set_approval_field(field, &approver_id);
    }
    Ok(())
}

/// The second-person fields a command names (a conversion's placeholders, to be signed by real
/// approvers with [`Approvers::approve_and_attach`]).
pub fn named_fields(command: &Wire) -> Vec<&'static str> {
    command.approval_fields().iter().filter(|(_, named)| named.is_some()).map(|(field, _)| *field).collect()
}

/// The development approvers' token of `id` (chipledgerd's `DEV_APPROVERS`).
fn dev_token(id: &str) -> String {
    DEV_APPROVERS
        .iter()
        .find(|(approver, _, _)| *approver == id)
        .map(|(_, _, token)| (*token).to_string())
        .unwrap_or_default()
}

/// The second persons of a command that sends many (demo, imports, bench): one token each. The
/// defaults are the development approvers of a bare `chipledgerd` (loopback, no configuration).
#[derive(Args, Debug, Clone)]
pub struct ApproverTokens {
    /// Token of a floor supervisor (slip floor signer, supervisor of large buy-ins, markers).
    #[arg(long, env = "CHIPLEDGER_FLOOR_TOKEN", hide_env_values = true, default_value_t = dev_token("dev-floor"))]
    pub floor_token: String,
    /// Token of a cage cashier (slip cage signer).
    #[arg(long, env = "CHIPLEDGER_CAGE_TOKEN", hide_env_values = true, default_value_t = dev_token("dev-cage"))]
    pub cage_token: String,
    /// Token of a second admin (credit lines, write-offs).
    #[arg(long, env = "CHIPLEDGER_CREDIT_TOKEN", hide_env_values = true, default_value_t = dev_token("dev-credit"))]
    pub credit_token: String,
}

impl ApproverTokens {
    pub fn tokens(&self) -> Vec<String> {
        [&self.floor_token, &self.cage_token, &self.credit_token]
            .into_iter()
            .filter(|token| !token.is_empty())
            .cloned()
            .collect()
    }
}

/// Second persons whose credentials this process holds (the demo's floor, cage and credit
/// approvers; an import's signers).
#[derive(Clone)]
pub struct Approvers {
    approvers: Vec<Approver>,
    ttl_seconds: u32,
}

#[derive(Clone)]
struct Approver {
    client: Client,
    /// The principal's role, learned from its first approval.
    role: Option<String>,
}

impl Approvers {
    /// One client per token, on the server and property of `server`.
    pub async fn connect(server: &ServerArgs, tokens: &[String], ttl_seconds: u32) -> anyhow::Result<Approvers> {
        let mut approvers = Vec::with_capacity(tokens.len());
        for token in tokens {
            let args = ServerArgs { token: Some(token.clone()), ..server.clone() };
            approvers.push(Approver { client: Client::connect(&args).await?, role: None });
        }
        Ok(Approvers { approvers, ttl_seconds })
    }

    /// Gets an approval for each of `fields` (second-person fields of `command`, to be sent
    /// under `command_id` and `property_id`, as `import` if one: a batch entry's its batch's)
    /// from an approver whose role the field allows, names the approvers there and attaches
    /// the tokens. Other fields are left as they are.
    pub async fn approve_and_attach(
        &mut self,
        command: &mut Wire,
        fields: &[&'static str],
        command_id: &str,
        property_id: &str,
        import: Option<&Import>,
    ) -> anyhow::Result<()> {
        if fields.is_empty() {
            return Ok(());
        }
        let rpc = command.rpc();
        for field in fields {
            command.set_approval_field(field, "");
        }
        let mut used = vec![false; self.approvers.len()];
        let mut tokens = Vec::new();
        for &field in fields {
            let rule = approval_rule(rpc, field).with_context(|| format!("no approval rule for {rpc} {field}"))?;
            let mut found = false;
            for (index, approver) in self.approvers.iter_mut().enumerate() {
                if used[index] || approver.role.as_deref().is_some_and(|role| !allows(rule, role)) {
                    continue;
                }
                match approve(&mut approver.client, command, command_id, property_id, import, self.ttl_seconds).await {
                    Ok(token) => {
                        let claims = approval::read_claims(&token.token).context("the server's approval token")?;
                        approver.role = Some(claims.approver_role.clone());
                        if allows(rule, &claims.approver_role) {
                            used[index] = true;
                            tokens.push(token.token);
                            found = true;
                            break;
                        }
                    }
                    // This approver's role approves nothing of this command: try the next.
                    Err(status) if status.code() == Code::PermissionDenied => {}
                    Err(status) => bail!("approval of {rpc} {command_id}: {}", describe_status(&status)),
                }
            }
            if !found {
                let roles: Vec<String> = rule.roles.iter().map(crate::words::rules_role).collect();
                bail!("{rpc} needs {field} from a principal with role {}: no approver token of that role was given", roles.join(" or "));
            }
        }
        attach(command, &tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(approver_id: &str, role: &str) -> String {
        let claims = approval::Claims {
            key_id: "k".into(),
            approver_id: approver_id.into(),
            approver_role: role.into(),
            property_id: "p".into(),
            rpc: "/chipledger.v1.CageService/Fill".into(),
            command_id: "c".into(),
            digest_hex: String::new(),
            issued_at_unix_ms: 0,
            expires_at_unix_ms: 0,
            approver_stamp: String::new(),
        };
        format!("{}.sig", claims.signed_text())
    }

    #[test]
    fn tokens_name_their_approvers_in_the_fields_their_roles_may_fill() {
        let mut fill = Wire::Fill(pb::Fill { signer_1: String::new(), signer_2: String::new(), ..Default::default() });
        attach(&mut fill, &[token("fred", "floor_supervisor"), token("carl", "cage")]).unwrap();
        let Wire::Fill(fill) = fill else { unreachable!() };
        assert_eq!((fill.signer_1.as_str(), fill.signer_2.as_str()), ("carl", "fred"));
        assert_eq!(fill.header.unwrap().approvals.len(), 2);

        let mut correction = Wire::Correction(pb::Correction::default());
        assert!(attach(&mut correction, &[token("carl", "cage")]).is_err(), "a cage principal approves no correction");
        let mut correction = Wire::Correction(pb::Correction { approved_by: "fred".into(), ..Default::default() });
        attach(&mut correction, &[token("fred", "floor_supervisor")]).unwrap();
        let Wire::Correction(correction) = correction else { unreachable!() };
        assert_eq!(correction.approved_by, "fred");
    }
}
