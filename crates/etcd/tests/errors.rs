//! The errors of calls that etcd does not take, against real etcd servers:
//! nothing listening, a member that does not answer (SIGSTOP), TLS
//! handshakes refused (a plain-HTTP etcd behind https://, a certificate
//! the CA given did not sign, a host name the certificate does not carry,
//! http:// to a TLS etcd), and etcd's authentication (a wrong password, a
//! user without a role, no user). Each is the variant that says so, names
//! the endpoint, and reads as one line of words: no debug dump of the gRPC
//! status under it.

use std::time::{Duration, Instant};

use crate::live::serial;
use crate::support::etcd::{Etcd, Pki, ROOT_PASSWORD, free_port};
use ringwise_etcd::{AuthProblem, Connection, Error, Tls, TlsProblem, Why};

const PREFIX: &str = "/ringwise-errors";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// `endpoints` with a short timeout (the deadline: twice it per endpoint
/// and one more), and `ca` trusted when given.
fn connection(endpoints: &str, ca: Option<std::path::PathBuf>) -> Connection {
    let mut connection = Connection::parse(endpoints).expect("endpoints");
    connection.timeout = Duration::from_millis(500);
    if let Some(ca) = ca {
        let mut tls = Tls::default();
        tls.ca = Some(ca);
        connection.tls = Some(tls);
    }
    connection
}

/// The error of reading the cluster through `connection`.
fn refused(connection: &Connection) -> Error {
    let read = runtime().block_on(ringwise_etcd::read(connection, PREFIX));
    match read {
        Ok((cluster, revision)) => panic!(
            "read at revision {revision} ({} members): the call was meant to fail",
            cluster.members.len()
        ),
        Err(e) => e,
    }
}

/// The problem of a TLS refusal, `None` for any other error.
fn tls_problem(e: &Error) -> Option<TlsProblem> {
    match e {
        Error::Tls { problem, .. } => Some(*problem),
        _ => None,
    }
}

/// One line of words naming every endpoint in `endpoints`: none of the
/// marks of a `Debug` dump (tonic's `Status { code: ..., metadata:
/// MetadataMap {...} }`, `Some(..)`, `Os { code: 111, ... }`).
fn assert_words(e: &Error, endpoints: &[&str]) -> String {
    let text = e.to_string();
    assert!(!text.contains('\n'), "one line: {text}");
    for mark in [
        "{",
        "}",
        "MetadataMap",
        "Status",
        "tonic",
        "Some(",
        "Os ",
        "code:",
    ] {
        assert!(!text.contains(mark), "{mark:?} in {text}");
    }
    for endpoint in endpoints {
        assert!(text.contains(endpoint), "{endpoint} not named: {text}");
    }
    assert!(
        std::error::Error::source(e).is_none(),
        "a source would print the message twice: {text}"
    );
    text
}

/// The failures of an [`Error::Unreachable`], as (endpoint, why).
fn unreached(e: &Error) -> Vec<(String, Why)> {
    match e {
        Error::Unreachable { endpoints, .. } => endpoints
            .iter()
            .map(|u| (u.endpoint.clone(), u.why.clone()))
            .collect(),
        other => panic!("not unreachable: {other}"),
    }
}

#[test]
fn nothing_listening_is_a_refused_connection_by_its_endpoint() {
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let e = refused(&connection(&endpoint, None));
    assert!(e.is_unreachable());
    assert_eq!(unreached(&e), [(endpoint.clone(), Why::Refused)]);
    let text = assert_words(&e, &[&endpoint]);
    assert_eq!(
        text,
        format!(
            "etcd: cannot list the members: nothing listens at {endpoint} (connection \
             refused); check that etcd runs there and that the address is right"
        )
    );
}

/// A stopped etcd accepts the connection (the kernel does) and never
/// answers: no answer within the connection's timeout. Listed with a port
/// where nothing listens, the error names both with their own failure.
#[test]
fn a_member_that_does_not_answer_is_no_answer_within_the_timeout() {
    let _serial = serial();
    let mut etcd = Etcd::single();
    etcd.pause(0);
    let silent = etcd.endpoint(0);
    let e = refused(&connection(&silent, None));
    let half = Duration::from_millis(500);
    assert_eq!(
        unreached(&e),
        [(silent.clone(), Why::NoAnswer { after: half })]
    );
    let text = assert_words(&e, &[&silent]);
    assert!(text.contains("did not answer within 0.5 s"), "{text}");

    let dead = format!("http://127.0.0.1:{}", free_port());
    let e = refused(&connection(&format!("{silent},{dead}"), None));
    let failures = unreached(&e);
    assert_eq!(failures.len(), 2, "{e}");
    assert_eq!(failures[0], (silent.clone(), Why::NoAnswer { after: half }));
    assert_eq!(failures[1], (dead.clone(), Why::Refused));
    let text = assert_words(&e, &[&silent, &dead]);
    assert!(text.contains("no endpoint answered"), "{text}");
    etcd.resume(0);
}

/// The TLS etcd answers a client that trusts its CA (the refusals below
/// are about the handshake, not a server still starting).
fn assert_serves(pki: &Pki, etcd: &Etcd) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let trusting = connection(&etcd.endpoints(), Some(pki.path("ca.pem")));
    loop {
        match runtime().block_on(ringwise_etcd::settings(&trusting, PREFIX)) {
            Ok(_) => return,
            Err(e) => assert!(Instant::now() < deadline, "the TLS etcd never served: {e}"),
        }
    }
}

#[test]
fn refused_tls_handshakes_say_why() {
    let _serial = serial();
    let pki = Pki::new();
    let secure = pki.etcd();
    assert_serves(&pki, &secure);
    let plain = Etcd::single();

    // https:// (with a CA) to an etcd that serves plain HTTP.
    let endpoint = plain.endpoint(0).replace("http://", "https://");
    let e = refused(&connection(&endpoint, Some(pki.path("ca.pem"))));
    assert!(
        matches!(&e, Error::Tls { problem: TlsProblem::NotTls, endpoint: at, .. } if *at == endpoint),
        "{e:?}"
    );
    let text = assert_words(&e, &[&endpoint]);
    assert!(text.contains("does not speak TLS"), "{text}");
    assert!(text.contains("write http://"), "{text}");

    // A server certificate that the CA given did not sign.
    let endpoint = secure.endpoint(0);
    let e = refused(&connection(&endpoint, Some(pki.path("other-ca.pem"))));
    assert_eq!(
        tls_problem(&e),
        Some(TlsProblem::UntrustedCertificate),
        "{e:?}"
    );
    let text = assert_words(&e, &[&endpoint]);
    assert!(
        text.contains("not signed by a CA this client trusts"),
        "{text}"
    );
    // No CA at all: the same.
    let mut untrusting = connection(&endpoint, None);
    untrusting.tls = Some(Tls::default());
    let e = refused(&untrusting);
    assert_eq!(
        tls_problem(&e),
        Some(TlsProblem::UntrustedCertificate),
        "{e:?}"
    );

    // The certificate is for 127.0.0.1, not for localhost.
    let by_name = endpoint.replace("127.0.0.1", "localhost");
    let e = refused(&connection(&by_name, Some(pki.path("ca.pem"))));
    assert_eq!(tls_problem(&e), Some(TlsProblem::WrongName), "{e:?}");
    let text = assert_words(&e, &[&by_name]);
    assert!(text.contains("it names 127.0.0.1, not localhost"), "{text}");

    // http:// to the TLS etcd: it hangs up on the plain request.
    let plain_to_secure = endpoint.replace("https://", "http://");
    let e = refused(&connection(&plain_to_secure, None));
    assert!(e.is_unreachable(), "{e:?}");
    let text = assert_words(&e, &[&plain_to_secure]);
    assert!(text.contains("write https://"), "{text}");

    // TLS files with an http:// endpoint: refused before any call.
    let e = refused(&connection(&plain_to_secure, Some(pki.path("ca.pem"))));
    assert!(
        matches!(
            &e,
            Error::InvalidOption {
                option: "endpoints",
                ..
            }
        ),
        "{e:?}"
    );
    let text = assert_words(&e, &[&plain_to_secure]);
    assert!(
        text.contains("is plain HTTP, yet TLS files are given"),
        "{text}"
    );
}

#[test]
fn refused_users_say_why() {
    let _serial = serial();
    let etcd = Etcd::single();
    etcd.enable_auth(&[("reader", "readerpw")]);
    let endpoint = etcd.endpoint(0);
    let as_user = |user: &str, password: &str| {
        let mut connection = connection(&endpoint, None);
        connection.user = Some((user.into(), password.into()));
        connection
    };
    let problem = |e: &Error| match e {
        Error::Auth {
            problem,
            endpoint: at,
            user,
            ..
        } => {
            assert_eq!(at, &endpoint);
            (*problem, user.clone())
        }
        other => panic!("not an auth error: {other:?}"),
    };

    let e = refused(&as_user("root", "not-the-password"));
    assert_eq!(
        problem(&e),
        (AuthProblem::WrongPassword, Some("root".into()))
    );
    let text = assert_words(&e, &[&endpoint]);
    assert!(text.contains("refused user \"root\""), "{text}");
    assert!(text.contains("check the user and password"), "{text}");

    let e = refused(&as_user("reader", "readerpw"));
    assert_eq!(
        problem(&e),
        (AuthProblem::PermissionDenied, Some("reader".into()))
    );
    let text = assert_words(&e, &[&endpoint]);
    assert!(text.contains("denied it to user \"reader\""), "{text}");

    let e = refused(&connection(&endpoint, None));
    assert_eq!(problem(&e), (AuthProblem::UserRequired, None));
    let text = assert_words(&e, &[&endpoint]);
    assert!(text.contains("no user was given"), "{text}");

    // The right password works: the refusals were etcd's, about the users.
    let root = as_user("root", ROOT_PASSWORD);
    runtime()
        .block_on(ringwise_etcd::settings(&root, PREFIX))
        .expect("root reads");
}
