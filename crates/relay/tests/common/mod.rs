//! A relay on 127.0.0.1 with its clients, for the loopback tests.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protobuf::well_known_types::any::Any;
use protobuf::MessageField;
use protoprof_model_relay::envoy::service::discovery::v3::Resource;
use protoprof_relay::push::{push, PushEvent, PushOptions, PushReport, Upstream};
use protoprof_relay::watch::{watch, Update, WatchOptions};
use protoprof_relay::{Config, Event, Limits, NamedResource, Relay};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

pub const CLUSTER: &str = "type.googleapis.com/quilkin.config.v1alpha1.Cluster";
pub const OTHER_TYPE: &str = "type.googleapis.com/quilkin.config.v1alpha1.Listener";
const PATIENCE: Duration = Duration::from_secs(20);

/// Named clusters with the given bytes.
pub fn upstream(items: &[(&str, &[u8])]) -> Upstream {
    let mut upstream = Upstream::default();
    for (name, value) in items {
        upstream.add(NamedResource::from_delta(Resource {
            name: name.to_string(),
            resource: MessageField::some(Any {
                type_url: CLUSTER.into(),
                value: value.to_vec(),
                ..Any::default()
            }),
            ..Resource::default()
        }));
    }
    upstream
}

/// What a proxy should hold: name -> the resource's bytes.
pub fn state(items: &[(&str, &[u8])]) -> BTreeMap<String, Vec<u8>> {
    items
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_vec()))
        .collect()
}

pub struct TestRelay {
    pub relay: Arc<Relay>,
    pub address: String,
    events: Arc<Mutex<Vec<Event>>>,
    _stop: oneshot::Sender<()>,
}

/// A management server holding its stream open.
pub struct Held {
    stop: oneshot::Sender<()>,
    task: JoinHandle<PushReport>,
}

impl Held {
    /// Ends the stream and waits for the client to finish.
    pub async fn leave(self) {
        let _ = self.stop.send(());
        self.task.await.expect("the push task");
    }
}

/// A proxy's view, rebuilt from the updates it receives.
pub struct Proxy {
    updates: mpsc::UnboundedReceiver<Update>,
    pub state: BTreeMap<String, Vec<u8>>,
    /// How many updates arrived so far.
    pub updates_seen: usize,
}

impl Proxy {
    fn apply(&mut self, update: Update) {
        match update {
            Update::Sotw(r) => {
                self.state = r
                    .message
                    .resources
                    .iter()
                    .map(|any| {
                        let named = NamedResource::from_sotw(any.clone()).expect("a resource");
                        (
                            named.name().to_string(),
                            named.resource.resource.value.clone(),
                        )
                    })
                    .collect();
            }
            Update::Delta(r) => {
                for name in &r.message.removed_resources {
                    self.state.remove(name);
                }
                for resource in &r.message.resources {
                    self.state
                        .insert(resource.name.clone(), resource.resource.value.clone());
                }
            }
        }
    }

    /// Applies updates until `done` holds of the state after one.
    pub async fn until(
        &mut self,
        done: impl Fn(&BTreeMap<String, Vec<u8>>) -> bool,
    ) -> BTreeMap<String, Vec<u8>> {
        loop {
            let update = tokio::time::timeout(PATIENCE, self.updates.recv())
                .await
                .unwrap_or_else(|_| panic!("no update; the proxy holds {:?}", self.state))
                .expect("the watch ended");
            self.updates_seen += 1;
            self.apply(update);
            if done(&self.state) {
                return self.state.clone();
            }
        }
    }
}

impl TestRelay {
    pub async fn start(limits: Limits) -> TestRelay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let config = Config {
            limits,
            ..Config::default()
        };
        let relay = Arc::new(Relay::new(
            config,
            Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone())),
        ));
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = relay.clone();
        tokio::spawn(async move {
            serving
                .serve(listener, async {
                    let _ = stopped.await;
                })
                .await
                .expect("the relay serves");
        });
        TestRelay {
            relay,
            address,
            events,
            _stop: stop,
        }
    }

    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    fn options(delta: bool, hold: bool) -> PushOptions {
        PushOptions {
            delta,
            hold,
            identifier: "test-management-server".into(),
        }
    }

    /// Upstreams and keeps the stream open; returns once every type is ACKed.
    pub async fn hold(&self, upstream: Upstream, delta: bool) -> Held {
        let (stop, stopped) = oneshot::channel::<()>();
        let (acked, mut acks) = mpsc::unbounded_channel();
        let address = self.address.clone();
        let types = upstream.by_type.len();
        let task = tokio::spawn(async move {
            let mut on_event = move |e: &PushEvent| {
                let _ = acked.send(e.clone());
            };
            let until = async {
                let _ = stopped.await;
            };
            push(
                &address,
                &upstream,
                &Self::options(delta, true),
                until,
                &mut on_event,
            )
            .await
            .expect("the push runs")
        });
        let mut seen = 0;
        while seen < types {
            let event = tokio::time::timeout(PATIENCE, acks.recv())
                .await
                .expect("an answer")
                .expect("events");
            match event {
                PushEvent::Acked { .. } => seen += 1,
                PushEvent::Nacked { detail, .. } => panic!("NACK: {detail}"),
                PushEvent::Sent { .. } => {}
            }
        }
        Held { stop, task }
    }

    /// Upstreams, waits for every answer and leaves.
    pub async fn push_once(&self, upstream: Upstream, delta: bool) -> PushReport {
        let (options, mut ignore) = (Self::options(delta, false), |_: &PushEvent| {});
        let run = push(
            &self.address,
            &upstream,
            &options,
            std::future::pending(),
            &mut ignore,
        );
        tokio::time::timeout(PATIENCE, run)
            .await
            .expect("answers")
            .expect("the push runs")
    }

    /// A proxy subscribed to clusters.
    pub async fn watch(&self, delta: bool, via_ads: bool) -> Proxy {
        let (sender, updates) = mpsc::unbounded_channel();
        let address = self.address.clone();
        tokio::spawn(async move {
            let options = WatchOptions {
                type_urls: vec![CLUSTER.into()],
                delta,
                via_ads,
                identifier: "test-proxy".into(),
            };
            let mut forward = move |u: &Update| match sender.send(u.clone()) {
                Ok(()) => ControlFlow::Continue(()),
                Err(_) => ControlFlow::Break(()),
            };
            let _ = watch(&address, &options, &mut forward).await;
        });
        Proxy {
            updates,
            state: BTreeMap::new(),
            updates_seen: 0,
        }
    }

    /// A proxy that stops at its first update; the error text if it fails.
    pub async fn try_watch_once(&self) -> Result<(), String> {
        let options = WatchOptions {
            type_urls: vec![CLUSTER.into()],
            delta: false,
            via_ads: false,
            identifier: "test-proxy".into(),
        };
        let mut stop = |_: &Update| ControlFlow::Break(());
        let run = watch(&self.address, &options, &mut stop);
        tokio::time::timeout(PATIENCE, run)
            .await
            .expect("an answer")
            .map_err(|e| format!("{e:?}"))
    }

    /// Sends raw message bytes on the state-of-the-world upstream method and
    /// returns the status the relay ends the stream with.
    pub async fn send_raw(&self, messages: &[Vec<u8>]) -> String {
        raw::send(&self.address, messages).await
    }
}

mod raw {
    //! A gRPC client that sends bytes as they are, for hostile input.

    use bytes::{Buf, BufMut};
    use tokio_stream::StreamExt;
    use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
    use tonic::Status;

    #[derive(Default)]
    struct Raw;

    impl Codec for Raw {
        type Encode = Vec<u8>;
        type Decode = Vec<u8>;
        type Encoder = Raw;
        type Decoder = Raw;
        fn encoder(&mut self) -> Raw {
            Raw
        }
        fn decoder(&mut self) -> Raw {
            Raw
        }
    }

    impl Encoder for Raw {
        type Item = Vec<u8>;
        type Error = Status;
        fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
            dst.put_slice(&item);
            Ok(())
        }
    }

    impl Decoder for Raw {
        type Item = Vec<u8>;
        type Error = Status;
        fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
            Ok(Some(src.copy_to_bytes(src.remaining()).to_vec()))
        }
    }

    pub async fn send(address: &str, messages: &[Vec<u8>]) -> String {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready().await.unwrap();
        let path = protoprof_relay::routes::path_of(
            protoprof_relay::routes::RELAY_SERVICE,
            protoprof_relay::routes::Role::UpstreamSotw,
        )
        .unwrap();
        let outgoing = tokio_stream::iter(messages.to_vec()).chain(tokio_stream::pending());
        let response = grpc
            .streaming(tonic::Request::new(outgoing), path.try_into().unwrap(), Raw)
            .await;
        let mut stream = match response {
            Ok(response) => response.into_inner(),
            Err(status) => return format!("{:?}", status.code()),
        };
        loop {
            match stream.message().await {
                Ok(Some(_)) => continue,
                Ok(None) => return "closed without an error".into(),
                Err(status) => return format!("{:?}: {}", status.code(), status.message()),
            }
        }
    }
}
