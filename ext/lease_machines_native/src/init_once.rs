//! The state of an object that Ruby allocates empty and `initialize` sets
//! once (`Authority`, `Fence`): a `Copy` core value in a `Cell`, read,
//! changed and written back with no Ruby call in between, so there is no
//! borrow to double and no re-entrancy while the state is out.

use std::cell::Cell;

use magnus::{value::ReprValue, Error, Ruby};

use crate::errors;

/// A state set once, by `initialize` or `initialize_copy`; until then the
/// core's default.
#[derive(Default)]
pub struct InitOnce<T> {
    state: Cell<T>,
    ready: Cell<bool>,
}

impl<T: Copy> InitOnce<T> {
    /// Sets the state of `object` (refusing a frozen one, then a second
    /// initialization of the `class`) from the arguments `make` checks.
    pub fn start(
        &self,
        ruby: &Ruby,
        object: impl ReprValue,
        class: &str,
        make: impl FnOnce() -> Result<T, Error>,
    ) -> Result<(), Error> {
        object.check_frozen()?;
        errors::first_init(ruby, self.ready.get(), class)?;
        self.state.set(make()?);
        self.ready.set(true);
        Ok(())
    }

    /// The state.
    pub fn get(&self) -> T {
        self.state.get()
    }

    /// Writes the state back after a change. A changed state has a history
    /// (an object made with `allocate` that decided without `initialize`):
    /// from then on `initialize` is refused as on any live object, so it can
    /// never start the history over and reissue tokens.
    pub fn set(&self, state: T) {
        self.state.set(state);
        self.ready.set(true);
    }
}
