//! `LeaseMachines::Native.owner_id_of(name)`: a name's owner id, by the core's
//! hash (FNV-1a, 64-bit) of the name's UTF-8 bytes.
//! `lib/lease_machines/runtime/owner_id.rb` adds `LeaseMachines.owner_id`.

use lease_machines::OwnerId;
use magnus::{function, prelude::*, Error, RModule, RString, Ruby, Value};

use crate::{
    convert,
    errors::{raise, Failure},
};

/// The owner id of `name`: a non-empty String, valid in its encoding and
/// convertible to UTF-8 (it is transcoded first, so the same text in any
/// encoding gives the same id).
fn owner_id_of(ruby: &Ruby, name: Value) -> Result<u64, Error> {
    let Some(text) = RString::from_value(name) else {
        let class = name.class().inspect();
        return Err(convert::refusing(ruby, name, |shown| {
            Failure::Type(format!("name must be a String, got {shown} ({class})"))
        }));
    };
    let utf8 = match text.to_string() {
        Ok(utf8) => utf8,
        Err(error) if error.is_kind_of(ruby.exception_standard_error()) => {
            let encoding = name
                .funcall::<_, _, Value>("encoding", ())
                .map_or_else(|_| String::from("an unknown encoding"), |e| e.to_string());
            return Err(convert::refusing(ruby, name, |shown| {
                Failure::Argument(format!(
                    "name must be text that converts to UTF-8, got {shown} ({encoding})"
                ))
            }));
        }
        Err(error) => return Err(error),
    };
    if utf8.is_empty() {
        return Err(raise(
            ruby,
            Failure::Argument(String::from("name must not be empty")),
        ));
    }
    Ok(OwnerId::of_name(utf8.as_bytes()).value())
}

pub fn define(native: RModule) -> Result<(), Error> {
    native.define_module_function("owner_id_of", function!(owner_id_of, 1))?;
    Ok(())
}
