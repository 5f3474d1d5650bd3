//! Test certificates made at test time with rcgen: a CA, a server certificate for
//! `localhost`/127.0.0.1 signed by it, client certificates signed by it, and client
//! certificates from an unrelated CA (which the server must refuse).

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose};

/// A PEM certificate and its PEM private key.
#[derive(Debug, Clone)]
pub struct Pem {
    pub cert: String,
    pub key: String,
}

/// A certificate authority that can sign leaf certificates.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Authority {
    pub fn new(name: &str) -> anyhow::Result<Authority> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        Ok(Authority { issuer })
    }

    pub fn cert_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate valid for `localhost` and 127.0.0.1.
    pub fn server(&self) -> anyhow::Result<Pem> {
        let mut params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])?;
        params.distinguished_name.push(DnType::CommonName, "chipledgerd");
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        self.leaf(params)
    }

    /// A client certificate whose subject CN is `common_name`.
    pub fn client(&self, common_name: &str) -> anyhow::Result<Pem> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        self.leaf(params)
    }

    fn leaf(&self, params: CertificateParams) -> anyhow::Result<Pem> {
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(Pem { cert: cert.pem(), key: key.serialize_pem() })
    }
}
