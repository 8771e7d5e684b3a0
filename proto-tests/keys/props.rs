//! Property tests: reading a key file never panics on mutated files of every format (bytes
//! changed, inserted, removed, the file cut), and whatever reads writes back and reads to
//! the same key.

use proptest::prelude::*;

use super::*;

/// Real files to mutate: the reference's RSA and DSA-1024 keys in every format (encrypted
/// only where it is cheap to try: the reference's scheme 4, 10000 PBKDF2-SHA-1 rounds).
fn seeds() -> &'static [(KeyFormat, Vec<u8>)] {
    static SEEDS: OnceLock<Vec<(KeyFormat, Vec<u8>)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds = Vec::new();
        for name in ["rsa", "dsa1024"] {
            let key = KeyMaterial::Private(fixture_key(name));
            for (format, encrypted) in [
                (KeyFormat::Reference, false),
                (KeyFormat::Reference, true),
                (KeyFormat::Pkcs8Pem, false),
                (KeyFormat::Jwk, false),
            ] {
                seeds.push((format, written(&key, format, encrypted)));
            }
            for format in PUBLIC_OUTPUTS {
                seeds.push((format, written(&key.to_public(), format, false)));
            }
        }
        seeds
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Cut(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
        any::<usize>().prop_map(Mutation::Cut),
    ]
}

fn mutate(file: &mut Vec<u8>, m: &Mutation) {
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
    match *m {
        Mutation::Set(i, b) if !file.is_empty() => {
            let i = at(i, file.len());
            file[i] = b;
        }
        Mutation::Insert(i, b) => {
            let i = at(i, file.len() + 1);
            file.insert(i, b);
        }
        Mutation::Remove(i) if !file.is_empty() => {
            file.remove(at(i, file.len()));
        }
        Mutation::Cut(i) => file.truncate(at(i, file.len() + 1)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutated_key_files_never_panic(
        seed in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
        given in any::<bool>(),
    ) {
        let (format, file) = seed.get(seeds());
        let mut file = file.clone();
        for m in &mutations {
            mutate(&mut file, m);
        }
        let format = given.then_some(*format);
        if let Ok(read) = KeyMaterial::read(&file, format, Some(PASSPHRASE)) {
            let again = written(&read.key, read.format, read.encrypted && read.key.is_private());
            let back = KeyMaterial::read(&again, Some(read.format), Some(PASSPHRASE)).unwrap();
            prop_assert_eq!(back.key.public_key(), read.key.public_key());
        }
    }
}
