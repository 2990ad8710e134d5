//! The relay on loopback, driven by its own management-server and proxy
//! clients: the merge, a server leaving and coming back, NACKs, the three
//! subscription methods agreeing, limits and hostile upstreams.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use protoprof_relay::push::PushEvent;
use protoprof_relay::{Event, Limits};

#[tokio::test]
async fn two_servers_merge_and_a_leaving_one_restores_the_shadowed_copy() {
    let relay = TestRelay::start(Limits::default()).await;
    let a = relay
        .hold(upstream(&[("c1", b"a1"), ("c2", b"a2")]), false)
        .await;
    let b = relay
        .hold(upstream(&[("c2", b"b2"), ("c3", b"b3")]), false)
        .await;

    let mut proxy = relay.watch(false, false).await;
    let merged = proxy.until(|s| s.len() == 3).await;
    assert_eq!(
        merged,
        state(&[("c1", b"a1"), ("c2", b"b2"), ("c3", b"b3")])
    );

    b.leave().await;
    let after = proxy.until(|s| s.len() == 2).await;
    assert_eq!(after, state(&[("c1", b"a1"), ("c2", b"a2")]));
    a.leave().await;
    assert!(proxy.until(|s| s.is_empty()).await.is_empty());
}

#[tokio::test]
async fn delta_and_state_of_the_world_proxies_see_the_same_set() {
    let relay = TestRelay::start(Limits::default()).await;
    let _a = relay
        .hold(upstream(&[("c1", b"a1"), ("c2", b"a2")]), true)
        .await;
    let _b = relay
        .hold(upstream(&[("c2", b"b2"), ("c3", b"b3")]), false)
        .await;
    let expected = state(&[("c1", b"a1"), ("c2", b"b2"), ("c3", b"b3")]);
    for (delta, via_ads) in [(false, false), (true, false), (true, true)] {
        let mut proxy = relay.watch(delta, via_ads).await;
        let seen = proxy.until(|s| s.len() == 3).await;
        assert_eq!(seen, expected, "delta {delta}, via ADS {via_ads}");
    }
}

#[tokio::test]
async fn a_restarted_management_server_replaces_what_it_served() {
    let relay = TestRelay::start(Limits::default()).await;
    let mut proxy = relay.watch(true, false).await;
    let first = relay
        .hold(upstream(&[("c1", b"v1"), ("c2", b"v1")]), true)
        .await;
    proxy.until(|s| s.len() == 2).await;
    first.leave().await;
    proxy.until(|s| s.is_empty()).await;
    let _second = relay.hold(upstream(&[("c1", b"v2")]), true).await;
    assert_eq!(proxy.until(|s| s.len() == 1).await, state(&[("c1", b"v2")]));
}

#[tokio::test]
async fn a_type_url_mismatch_is_nacked_with_the_rule_and_nothing_is_served() {
    let relay = TestRelay::start(Limits::default()).await;
    let mut bad = upstream(&[("c1", b"a1")]);
    let resources = bad.by_type.remove(CLUSTER).unwrap();
    bad.by_type.insert(OTHER_TYPE.to_string(), resources);
    let report = relay.push_once(bad, false).await;
    let nack = report
        .events
        .iter()
        .find_map(|e| match e {
            PushEvent::Nacked { detail, .. } => Some(detail.clone()),
            _ => None,
        })
        .expect("a NACK");
    assert!(nack.starts_with("RELAY-TYPE-001 at resources[0]"), "{nack}");
    assert!(relay
        .events()
        .iter()
        .any(|e| matches!(e, Event::NackSent { .. })));
    assert!(relay
        .relay
        .store()
        .snapshot(OTHER_TYPE)
        .resources
        .is_empty());
}

#[tokio::test]
async fn delta_upstreams_name_their_resources() {
    let relay = TestRelay::start(Limits::default()).await;
    let mut nameless = upstream(&[("c1", b"a1")]);
    for r in nameless.by_type.values_mut().flatten() {
        r.resource.name.clear();
    }
    let report = relay.push_once(nameless, true).await;
    assert!(report.any_nacked(), "{:?}", report.events);
}

#[tokio::test]
async fn a_server_over_its_resource_limit_is_nacked() {
    let limits = Limits {
        max_resources_per_server: 2,
        ..Limits::default()
    };
    let relay = TestRelay::start(limits).await;
    let report = relay
        .push_once(upstream(&[("c1", b"1"), ("c2", b"2"), ("c3", b"3")]), false)
        .await;
    let detail = format!("{:?}", report.events);
    assert!(detail.contains("relay limit: 3 resources"), "{detail}");
}

#[tokio::test]
async fn streams_over_the_limit_are_refused_and_the_others_go_on() {
    let limits = Limits {
        max_streams: 1,
        ..Limits::default()
    };
    let relay = TestRelay::start(limits).await;
    let _a = relay.hold(upstream(&[("c1", b"a1")]), false).await;
    let error = relay
        .try_watch_once()
        .await
        .expect_err("a second stream is refused");
    assert!(error.contains("ResourceExhausted"), "{error}");
    assert_eq!(relay.relay.store().snapshot(CLUSTER).resources.len(), 1);
}

#[tokio::test]
async fn a_hostile_upstream_gets_its_stream_closed_and_the_relay_goes_on() {
    let limits = Limits {
        max_message_bytes: 1024,
        ..Limits::default()
    };
    let relay = TestRelay::start(limits).await;
    let garbage = relay
        .send_raw(&[vec![], vec![0x0a, 0xff, 0xff, 0xff]])
        .await;
    assert!(garbage.contains("InvalidArgument"), "{garbage}");
    let huge = relay.send_raw(&[vec![], vec![0; 4096]]).await;
    assert!(
        huge.contains("OutOfRange") || huge.contains("ResourceExhausted"),
        "{huge}"
    );
    let _a = relay.hold(upstream(&[("c1", b"a1")]), false).await;
    let mut proxy = relay.watch(false, false).await;
    let seen = tokio::time::timeout(Duration::from_secs(10), proxy.until(|s| s.len() == 1)).await;
    assert_eq!(
        seen.unwrap(),
        BTreeMap::from([("c1".to_string(), b"a1".to_vec())])
    );
}

#[tokio::test]
async fn a_proxy_far_behind_catches_up_in_bounded_responses() {
    let relay = TestRelay::start(Limits::default()).await;
    let names: Vec<String> = (0..4500).map(|i| format!("c{i:05}")).collect();
    let items: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), n.as_bytes())).collect();
    let _a = relay.hold(upstream(&items), true).await;
    let mut proxy = relay.watch(true, false).await;
    let held = proxy.until(|s| s.len() == 4500).await;
    assert_eq!(held, state(&items));
    // 1,000 resources at most per response: five responses.
    assert_eq!(proxy.updates_seen, 5);
}
