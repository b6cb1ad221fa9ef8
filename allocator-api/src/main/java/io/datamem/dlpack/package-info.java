/**
 * DLPack: exporting arrays as {@code DLManagedTensorVersioned} / legacy {@code DLManagedTensor}
 * in native memory and importing producers' tensors as arrays ({@link io.datamem.dlpack.DLPack}).
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so. Threading:
 * exports and imports may happen on any thread; deleters may be called from any native thread.
 */
package io.datamem.dlpack;
